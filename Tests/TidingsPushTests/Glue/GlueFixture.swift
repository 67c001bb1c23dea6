import Foundation
import TidingsCore
import TidingsMastodon
import TidingsNet
import TidingsPush
import TidingsSandbox
import TidingsSandboxKit

/// The in-process Mastodon sandbox (alice follows bob), alice's engine over it, the policy's store, a widget
/// board and alice's raiser, everything on one `TestClock` (the sandbox's dates too). Pushes the sandbox sends
/// (encrypted and VAPID-signed as Mastodon does) are captured as they were received, to be routed by the test.
struct GlueFixture {
    /// 2026-12-01 23:00 UTC: inside the quiet hours some tests set (22:00–07:00 UTC).
    static let epoch = Date(timeIntervalSince1970: 1_796_166_000)
    static let account = "alice@sandbox"
    static let endpoint = URL(string: "https://push.invalid/push/alice")!
    let clock = TestClock()
    let server: MastodonSandboxServer
    let http: SandboxHTTPServer
    let alice: String
    let bob: String
    let carol: String
    let database: SQLiteDatabase
    let engine: MastodonAccountEngine
    let policy: NotificationPolicyStore
    let board: NotificationWidgetBoard
    let registrar: MastodonWebPushRegistrar
    let raiser: MastodonNotificationRaiser
    let pushes = LockedState<[IncomingWebPush]>([])
    /// Every request alice's engine sent, as `METHOD /path`.
    let sent = LockedState<[String]>([])

    /// The schema of one store file holding the timeline, the policy's tables and the push keys.
    static let schema = SQLiteSchema(
        tables: MastodonTimelineSchema.schema.tables + NotificationPolicyStore.tables + PushStoreSchema.schema.tables
            + NotificationReplyOutbox.tables,
        migrations: MastodonTimelineSchema.schema.migrations + [
            .init(
                version: MastodonTimelineSchema.schema.migrations.count + 1, name: "notification policy and push keys"
            ) { db in
                try NotificationPolicyStore.createTables(db)
                try NotificationReplyOutbox.createTables(db)
                for migration in PushStoreSchema.schema.migrations { try migration.body(db) }
            }
        ])

    init(
        configuration: NotificationRaiserConfiguration = NotificationRaiserConfiguration(),
        variant: MastodonSandboxVariant = .mastodon, wake: (@Sendable () async -> Void)? = nil,
        budget: RateBudget? = nil, zone: NotificationZoneSource = .fixed(.zoneInfo(.utc))
    ) async throws {
        // The times the tests name are UTC's, whatever zone the machine running them is in.
        var configuration = configuration
        configuration.zone = zone
        let clock = clock
        let now: @Sendable () -> Date = { Self.epoch.addingTimeInterval(clock.now.offset.inSeconds) }
        server = MastodonSandboxServer(variant: variant, now: now)
        http = server.httpServer(clock: clock)
        alice = await server.addAccount(username: "alice", token: "alice-token")
        bob = await server.addAccount(username: "bob", token: "bob-token")
        carol = await server.addAccount(username: "carol", token: "carol-token")
        await server.follow(alice, bob)
        database = try SQLiteDatabase.inMemory(schema: Self.schema)
        let store = MastodonTimelineStore(database: database, now: now)
        let sent = sent
        let client = MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: Self.account,
            authorization: MastodonAuthorization(token: "alice-token"),
            transport: RecordingTransport(inner: MastodonSandboxTransport(server: http), sent: sent), budget: budget)
        engine = MastodonAccountEngine(
            client: client, store: store, capabilities: try await MastodonCapabilities.fetch(with: client),
            clock: clock)
        policy = NotificationPolicyStore(database: database)
        board = NotificationWidgetBoard()
        registrar = MastodonWebPushRegistrar(
            account: Self.account, database: database, cipher: try ValueCipher(key: .random()),
            client: MastodonPushSubscriptionClient(api: client))
        let registrar = registrar
        raiser = MastodonNotificationRaiser(
            engine: engine, policy: policy, clock: NotificationPolicyClock(clock, origin: Self.epoch),
            configuration: configuration, board: board, pushKeys: { try await registrar.keys() },
            registrations: [registrar], wake: wake)
        let pushes = pushes
        server.pushSubscriptions.setSender(
            MastodonSandboxPushSender(
                transport: { request in
                    pushes.withLock {
                        $0.append(
                            IncomingWebPush(
                                endpoint: request.url, body: [UInt8](request.body ?? Data()),
                                contentEncoding: request.headers["Content-Encoding"],
                                cryptoKey: request.headers["Crypto-Key"], encryption: request.headers["Encryption"]))
                    }
                    return HTTPResponse(status: 201, headers: [:], body: Data(), url: request.url)
                }, now: now))
    }

    static func client(_ http: SandboxHTTPServer, token: String, account: String = GlueFixture.account)
        -> MastodonAPIClient
    {
        MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: account,
            authorization: MastodonAuthorization(token: token), transport: MastodonSandboxTransport(server: http))
    }

    /// Subscribes alice's push at ``endpoint`` for every alert.
    func subscribe() async throws {
        let status = await registrar.reconcile(endpoint: Self.endpoint, alerts: .personal, policy: .all)
        guard case .active = status else { throw PushRoutingError.unknownEndpoint }
    }

    /// Waits (with the sandbox's 30 s deadline) until `count` pushes were delivered, and returns what arrived.
    func receivedPushes(_ count: Int) async -> [IncomingWebPush] {
        _ = await server.pushSubscriptions.deliveries(count: count)
        return pushes.withLock { $0 }
    }

    /// The withdrawals `events` carried so far (decisions skipped): a fence published now ends the read, so a
    /// missing withdrawal fails the expectation instead of waiting.
    func withdrawals(_ events: MastodonNotificationRaiser.AsyncStreamOfEvents) async -> [[String]] {
        await Self.withdrawals(publishedBy: raiser, events)
    }

    /// The withdrawals `raiser` (this fixture's, or a relaunched app's) published on `events` so far, read
    /// up to a fence it publishes now.
    static func withdrawals(
        publishedBy raiser: MastodonNotificationRaiser, _ events: MastodonNotificationRaiser.AsyncStreamOfEvents
    ) async -> [[String]] {
        await raiser.withdrawRaised(["fence"])
        var found: [[String]] = []
        for await event in events {
            guard case .withdrawRaised(let identifiers) = event else { continue }
            if identifiers == ["fence"] { break }
            found.append(identifiers)
        }
        return found
    }

    /// `who` favourites status `id` through the API.
    func favourite(_ id: String, by token: String) async throws {
        _ = try await Self.client(http, token: token, account: token).perform(.favourite, status: ServerID(id))
    }
}

/// Passes every request on and notes its method and path.
struct RecordingTransport: MastodonTransport {
    let inner: any MastodonTransport
    let sent: LockedState<[String]>

    func response(for request: HTTPRequest) async throws -> HTTPResponse {
        sent.withLock { $0.append("\(request.method.rawValue) \(request.url.path)") }
        return try await inner.response(for: request)
    }
}

extension AccountNotificationDecision {
    /// `raise`, `update`, `hold` or `drop` with the reason, for compact expectations.
    var label: String {
        switch decision {
        case .raise: "raise"
        case .update: "update"
        case .hold(_, let reason): "hold:\(reason.rawValue)"
        case .drop(let reason): "drop:\(reason.rawValue)"
        }
    }
}
