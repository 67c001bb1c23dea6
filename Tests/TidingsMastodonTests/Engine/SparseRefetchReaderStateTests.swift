import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// A refetch or a deletion re-check writes the server's copy of a status, but a server that leaves the reader's
/// flags out (Pleroma-style nulls: the sandbox's sparse fields) says nothing about them: the flags this device
/// knew stay, and a flag the server does send still wins.
@Suite(.timeLimit(.minutes(1)))
struct SparseRefetchReaderStateTests {
    @Test func aSparseRefetchOrRecheckKeepsTheKnownFavouriteAndBookmark() async throws {
        let fixture = try await EngineFixture(variant: .pleroma)
        let engine = fixture.engine
        let id = await fixture.postMany(1)[0]
        try await engine.refresh()
        #expect(try await engine.perform(.favourite, on: id) != nil)
        #expect(try await engine.perform(.bookmark, on: id) != nil)
        #expect(try await engine.pendingActions().isEmpty)
        let known = try #require(try await engine.status(id))
        #expect(known.favourited == true && known.bookmarked == true, "both confirmed and shown")

        #expect(await fixture.server.edit(id.rawValue, content: "edited"))
        let refetched = try #require(try await engine.refetchStatus(id))
        #expect(refetched.favourited == nil && refetched.bookmarked == nil, "the server's answer is sparse")
        var shown = try #require(try await engine.status(id))
        #expect(shown.content.contains("edited"), "the server's text is written")
        #expect(shown.favourited == true && shown.bookmarked == true)

        #expect(await fixture.server.edit(id.rawValue, content: "edited again"))
        #expect(try await engine.recheckCachedStatuses().isEmpty)
        shown = try #require(try await engine.status(id))
        #expect(shown.content.contains("edited again"))
        #expect(shown.favourited == true && shown.bookmarked == true)
    }

    @Test func aFlagTheServerSendsReplacesTheKnownOne() async throws {
        let fixture = try await EngineFixture(variant: .pleroma)
        let engine = fixture.engine
        let id = await fixture.postMany(1)[0]
        try await engine.refresh()
        #expect(try await engine.perform(.favourite, on: id) != nil)
        // Another device takes the favourite back; this server now sends every field.
        var full = MastodonSandboxVariant.pleroma
        full.sparseFields = false
        await fixture.server.setVariant(full)
        _ = try await engine.client.perform(.unfavourite, status: id)
        try await engine.refetchStatus(id)
        #expect(try await engine.status(id)?.favourited == false)
    }
}
