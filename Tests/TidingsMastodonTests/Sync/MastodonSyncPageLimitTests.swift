import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsNet
import TidingsSandbox
import TidingsSandboxKit

/// Seed 002: home and notification polls ask `limit=40`. The sandbox clamps larger limits to 40, so only the
/// query on the wire shows what the engine asks; this reads it for an account added with `MastodonSync`'s
/// defaults, on every path that fetches home or notifications.
@Suite(.timeLimit(.minutes(1)))
struct MastodonSyncPageLimitTests {
    /// Passes every request on to the sandbox and remembers its URL.
    final class RecordingTransport: MastodonTransport {
        private let inner: MastodonSandboxTransport
        private let urls = LockedState<[URL]>([])

        init(_ inner: MastodonSandboxTransport) { self.inner = inner }

        var recorded: [URL] { urls.withLock { $0 } }

        func response(for request: HTTPRequest) async throws -> HTTPResponse {
            urls.withLock { $0.append(request.url) }
            return try await inner.response(for: request)
        }
    }

    private static func limits(_ urls: [URL], path: String) -> [String?] {
        urls.filter { $0.path == path }.map { url in
            URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "limit" }?.value
        }
    }

    @Test(arguments: [MastodonSandboxVariant.mastodon, .pleroma])
    func homeAndNotificationsAskForty(_ variant: MastodonSandboxVariant) async throws {
        let fixture = try await MastodonSyncTests.Fixture(variant: variant)
        let base = fixture.base
        let sync = fixture.sync
        await base.postMany(3)
        _ = await base.server.post(as: base.bob, "hello @alice", mentioning: [base.alice])
        let transport = RecordingTransport(MastodonSandboxTransport(server: base.http))
        await sync.appStateChanged(.activeAccount("alice@sandbox"))
        let engine = await sync.addAccount(
            client: MastodonAPIClient(
                server: URL(string: "https://sandbox.invalid")!, accountKey: "alice@sandbox",
                authorization: MastodonAuthorization(token: "alice-token"), transport: transport),
            store: base.store)
        #expect(engine.pageLimit == 40)
        // The stream's backfill, a timeline appearing, a push asking for notifications, and the engine's polls.
        #expect(try await sync.timelineAppeared("home", account: "alice@sandbox"))
        #expect(try await sync.scheduler.notificationsRequested(account: "alice@sandbox"))
        try await engine.pollTimeline("home")
        try await engine.pollNotifications()
        let notificationsPath = variant == .pleroma ? "/api/v1/notifications" : "/api/v2/notifications"
        let home = Self.limits(transport.recorded, path: "/api/v1/timelines/home")
        let notifications = Self.limits(transport.recorded, path: notificationsPath)
        #expect(home.count >= 2 && notifications.count >= 2, "\(transport.recorded)")
        #expect(home.allSatisfy { $0 == "40" }, "\(home)")
        #expect(notifications.allSatisfy { $0 == "40" }, "\(notifications)")
        await sync.shutdown()
    }
}
