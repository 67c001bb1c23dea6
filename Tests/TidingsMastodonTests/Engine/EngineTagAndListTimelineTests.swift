import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// Tag (`tag:<hashtag>`) and list (`list:<id>`) timelines: fetched, anchored and paged like home, each its own
/// key; a timeline the engine cannot fetch fails only itself.
@Suite(.timeLimit(.minutes(1)))
struct EngineTagAndListTimelineTests {
    @Test func aTagTimelineIsCachedAndRefreshedAboveItsNewest() async throws {
        let fixture = try await EngineFixture(pageLimit: 4)
        let carol = await fixture.server.addAccount(username: "carol", token: "carol-token")
        var tagged: [ServerID] = []
        for index in 0..<10 {
            // Alice follows neither carol nor every tag post's author: the tag timeline is not home.
            let author = index.isMultiple(of: 2) ? carol : fixture.bob
            tagged.append(ServerID(await fixture.server.post(as: author, "hello #Swift \(index)")))
            await fixture.server.post(as: author, "untagged \(index)")
        }
        try await fixture.syncToTheEnd(timeline: "tag:swift")
        let cached = try await fixture.engine.entries("tag:swift").compactMap(\.statusID)
        #expect(cached == tagged, "oldest first, every tagged status once, nothing else")
        #expect(try await fixture.engine.entries("tag:swift").allSatisfy { !$0.isGap })

        let newer = ServerID(await fixture.server.post(as: carol, "more #swift"))
        try await fixture.engine.refresh("tag:swift")
        #expect(try await fixture.engine.entries("tag:swift").compactMap(\.statusID) == tagged + [newer])
        let last = try #require(fixture.log.entries.last { $0.path.hasPrefix("/api/v1/timelines/tag/") })
        #expect(last.path == "/api/v1/timelines/tag/swift")
        #expect(try await fixture.engine.entries().isEmpty, "home untouched")
    }

    @Test func aListTimelineHoldsItsMembersPostsAndAMissingListIsNotFound() async throws {
        let fixture = try await EngineFixture(pageLimit: 3)
        let carol = await fixture.server.addAccount(username: "carol", token: "carol-token")
        let list = await fixture.server.addList(owner: fixture.alice, title: "friends", members: [carol])
        var carols: [ServerID] = []
        for index in 0..<7 {
            carols.append(ServerID(await fixture.server.post(as: carol, "carol \(index)")))
            await fixture.server.post(as: fixture.bob, "bob \(index)")
        }
        try await fixture.syncToTheEnd(timeline: "list:\(list)")
        #expect(try await fixture.engine.entries("list:\(list)").compactMap(\.statusID) == carols)

        await #expect(throws: MastodonError.notFound) { try await fixture.engine.refresh("list:424242") }
        await #expect(throws: MastodonError.unsupported) { try await fixture.engine.refresh("bookmarks") }
        await #expect(throws: MastodonError.unsupported) { try await fixture.engine.refresh("tag:") }
    }

    @Test func anotherReadersListIsNotFound() async throws {
        let fixture = try await EngineFixture()
        let list = await fixture.server.addList(owner: fixture.bob, title: "bob's", members: [fixture.alice])
        await #expect(throws: MastodonError.notFound) { try await fixture.engine.refresh("list:\(list)") }
    }
}
