import Foundation
import Testing
import TidingsCore
import TidingsKecalek
import TidingsSandbox

/// Sync against servers the document allows but the client was not shaped after (issue 9).
@Suite(.timeLimit(.minutes(1))) struct KecalekServerVariantTests {
    typealias Variant = KecalekSandboxServer.Variant

    /// Runs `tidings kecalek sync`-like rounds: a fresh client per run over one cache, posts and deletions
    /// between runs, some in the second of the newest cached message; returns the harness for checks.
    static func threeRuns(_ variant: Variant, limit: Int = 50) async throws -> (KecalekHarness, [KecalekMessagePage]) {
        let harness = try await KecalekHarness(seeded: 0, reconnects: false)
        await harness.client.close()
        let server = harness.server
        await server.setVariant(variant)
        try await server.seed(conversation: KecalekHarness.conversation, from: ["bob", "alice"], count: 70)
        var pages: [KecalekMessagePage] = []
        for run in 0..<3 {
            let client = try await harness.relaunch()
            pages.append(await client.messages(conversation: KecalekHarness.conversation, limit: limit))
            await client.close()
            // Same second as the newest cached message, then a burst in the next second.
            for index in 0..<(30 + run * 10) {
                try await server.post(
                    conversation: KecalekHarness.conversation, from: "bob", text: "same \(run) \(index)")
            }
            let ids = await server.messageIDs(conversation: KecalekHarness.conversation)
            await server.delete(conversation: KecalekHarness.conversation, messageID: ids[ids.count - 45])
            await server.delete(conversation: KecalekHarness.conversation, messageID: ids[ids.count - 1])
            await server.advanceTime(by: .seconds(1))
            for index in 0..<60 {
                try await server.post(
                    conversation: KecalekHarness.conversation, from: "carol", text: "next \(run) \(index)")
            }
        }
        let client = try await harness.relaunch()
        pages.append(await client.messages(conversation: KecalekHarness.conversation, limit: limit))
        await client.close()
        return (harness, pages)
    }

    /// The cache's newest `window` rows equal the server's newest `window` messages.
    static func expectWindowMatches(_ harness: KecalekHarness, window: Int) async throws {
        let server = await harness.server.messageIDs(conversation: KecalekHarness.conversation)
        let cached = try harness.cache.newestMessages(conversationID: KecalekHarness.conversation, limit: .max)
            .map(\.messageID)
        let serverSet = Set(server)
        let resurrected = cached.filter { !serverSet.contains($0) }
        #expect(resurrected.isEmpty, "deleted but still cached: \(resurrected)")
        let missing = server.suffix(window).filter { !cached.contains($0) }
        #expect(missing.isEmpty, "\(missing.count) of the server's newest \(window) missing from the cache")
        #expect(Set(cached).count == cached.count)
    }

    @Test func theIssue9ServerLosesNothingAndResurrectsNothing() async throws {
        let (harness, pages) = try await Self.threeRuns(.secondsNewestFirstSilent)
        try await Self.expectWindowMatches(harness, window: 200)
        #expect(pages.last?.gapRemains == false)
    }

    @Test(arguments: [
        Variant(resolution: .second),
        Variant(resolution: .second, comparison: .greaterOrEqual),
        Variant(resolution: .second, pageOrder: .newestFirst),
        Variant(resolution: .second, pageOrder: .oldestFirst, honoursOffset: false, notifications: .none),
        Variant(resolution: .millisecond, pageOrder: .newestFirst, notifications: .withoutDeletions),
        Variant(resolution: .second, pageOrder: .newestFirst, pageSizeCap: 20),
        Variant(resolution: .second, pageOrder: .oldestFirst, notifications: .none, pageSizeCap: 7),
        Variant(resolution: .millisecond, pageOrder: .oldestFirst, honoursOffset: false, pageSizeCap: 20),
    ])
    func everyVariantConverges(_ variant: Variant) async throws {
        let (harness, pages) = try await Self.threeRuns(variant)
        try await Self.expectWindowMatches(harness, window: 200)
        #expect(pages.last?.gapRemains == false, "\(variant)")
    }

    /// Without `offset`, newest-first pages that come back shorter than asked are either everything or the
    /// server's page-size cap, which no answer can tell apart: nothing may be lost, but a gap may be reported.
    @Test func aServerThatIgnoresOffsetWithNewestFirstPagesLosesNothing() async throws {
        let (harness, _) = try await Self.threeRuns(
            Variant(resolution: .second, pageOrder: .newestFirst, honoursOffset: false, notifications: .none))
        try await Self.expectWindowMatches(harness, window: 200)
    }

    /// More messages share one second than the cap lets a page hold, and `offset` is ignored: nothing can
    /// reach past the first page of that second, and every sync says so.
    @Test func tiesBeyondTheCapWithoutOffsetLeaveAVisibleGap() async throws {
        let (harness, pages) = try await Self.threeRuns(
            Variant(resolution: .second, pageOrder: .oldestFirst, honoursOffset: false, pageSizeCap: 20))
        #expect(pages.dropFirst().allSatisfy { $0.gapRemains })
        let server = await harness.server.messageIDs(conversation: KecalekHarness.conversation)
        let cached = try harness.cache.newestMessages(conversationID: KecalekHarness.conversation, limit: .max)
        #expect(cached.allSatisfy { server.contains($0.messageID) })
    }

    @Test func aCappedServerThatIgnoresOffsetWithNewestFirstPagesLeavesAVisibleGap() async throws {
        let (harness, pages) = try await Self.threeRuns(
            Variant(
                resolution: .second, pageOrder: .newestFirst, honoursOffset: false, notifications: .none,
                pageSizeCap: 20))
        // Nothing can prove the older part of each burst: the page says so, and no run pretended otherwise.
        #expect(pages.dropFirst().allSatisfy { $0.gapRemains })
        let server = await harness.server.messageIDs(conversation: KecalekHarness.conversation)
        let cached = try harness.cache.newestMessages(conversationID: KecalekHarness.conversation, limit: .max)
        #expect(cached.allSatisfy { server.contains($0.messageID) })
    }
}
