import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// A visible hashtag or list timeline is what the ticks poll, through the real engine and the sandbox, on the
/// virtual clock (a server without streaming, so the table's 30 s apply): its statuses are cached, no timeline
/// failure is reported, and notifications keep being polled.
@Suite(.timeLimit(.minutes(1)))
struct MastodonSyncTagAndListPollingTests {
    static let alice = "alice@sandbox"

    /// Advances the clock 30 s at a time (the table's interval) until `timeline` caches `id`.
    static func ticks(
        until id: ServerID, in timeline: String, _ fixture: MastodonSyncTests.Fixture, engine: MastodonAccountEngine
    ) async throws -> Bool {
        for _ in 0..<6 {
            await fixture.base.clock.advance(by: .seconds(30))
            let cached = await eventually {
                (try? await engine.entries(timeline).contains { $0.statusID == id }) == true
            }
            if cached { return true }
        }
        return false
    }

    @Test(arguments: ["tag:swift", "list"])
    func aVisibleTagOrListTimelineIsPolled(_ kind: String) async throws {
        let fixture = try await MastodonSyncTests.Fixture(variant: .nextcloud, preset: .normal)
        let sync = fixture.sync
        let base = fixture.base
        let timeline =
            kind == "list"
            ? "list:\(await base.server.addList(owner: base.alice, title: "friends", members: [base.bob]))" : kind
        await sync.appStateChanged(.activeAccount(Self.alice))
        await sync.appStateChanged(.visibleTimeline(timeline))
        let engine = await fixture.add("alice-token", Self.alice)
        let id = ServerID(await base.server.post(as: base.bob, "<p>hello #swift</p>"))
        #expect(try await Self.ticks(until: id, in: timeline, fixture, engine: engine))
        #expect(await sync.scheduler.timelineFailure(account: Self.alice) == nil)
        let path = kind == "list" ? "/api/v1/timelines/list/" : "/api/v1/timelines/tag/swift"
        #expect(base.requests(path) >= 1)
        #expect(base.requests("/api/v1/notifications") >= 1)
        await sync.shutdown()
    }
}
