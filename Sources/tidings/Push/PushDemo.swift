import Foundation
import TidingsCore
import TidingsMastodon
import TidingsNet
import TidingsPush
import TidingsSandbox
import TidingsSandboxKit

/// The demo's push part.
let pushDemoPart = DemoPart(
    name: "push", title: "Push: from a server event to a raised notification, on a virtual clock",
    run: { try await pushDemo() })

/// One signed-in account of the push demo: its engine over the sandbox, store, registrar, raiser and push link.
private struct PushDemoAccount {
    let name: String
    let raiser: MastodonNotificationRaiser
    let link: MastodonPushAccount
    let endpoint: URL

    init(
        _ name: String, token: String, http: SandboxHTTPServer, clock: TestClock, epoch: Date, mode: PushDeliveryMode,
        settings: NotificationSettings, router: PushAccountRouter, now: @escaping @Sendable () -> Date
    ) async throws {
        self.name = name
        let key = "\(name)@sandbox"
        let client = MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: key,
            authorization: MastodonAuthorization(token: token), transport: MastodonSandboxTransport(server: http),
            now: now)
        let database = try SQLiteDatabase.inMemory(schema: pushDemoSchema)
        let engine = MastodonAccountEngine(
            client: client, store: MastodonTimelineStore(database: database, now: now),
            capabilities: try await MastodonCapabilities.fetch(with: client), clock: clock)
        let registrar = MastodonWebPushRegistrar(
            account: key, database: database, cipher: try ValueCipher(key: .random()),
            client: MastodonPushSubscriptionClient(api: client), now: now)
        raiser = MastodonNotificationRaiser(
            engine: engine, policy: NotificationPolicyStore(database: database),
            clock: NotificationPolicyClock(clock, origin: epoch),
            configuration: NotificationRaiserConfiguration(
                settings: settings, mode: mode,
                content: NotificationContentContext(platform: .android, accountHandle: key),
                // The demo's times are UTC's on every machine.
                zone: .fixed(.zoneInfo(.utc))),
            pushKeys: { try await registrar.keys() }, registrations: [registrar])
        link = MastodonPushAccount(raiser: raiser, registrar: registrar, router: router)
        endpoint = URL(string: "https://push.invalid/push/\(name)")!
    }
}

/// One store per demo account: the timeline, the raised set and the push keys.
private let pushDemoSchema = SQLiteSchema(
    tables: MastodonTimelineSchema.schema.tables + NotificationPolicyStore.tables + PushStoreSchema.schema.tables,
    migrations: MastodonTimelineSchema.schema.migrations + [
        .init(version: MastodonTimelineSchema.schema.migrations.count + 1, name: "notifications and push") { db in
            try NotificationPolicyStore.createTables(db)
            for migration in PushStoreSchema.schema.migrations { try migration.body(db) }
        }
    ])

/// Two accounts on the in-process Mastodon sandbox, subscribed to Web Push: alice in content mode with quiet
/// hours 22:00–07:00, bob in wake mode, later on a digest at 08:00 (all UTC). The sandbox encrypts and signs
/// each push as Mastodon does; the demo hands the received request to the router as a push service would, and
/// every line below is what the notification policy decided. A `TestClock` moves the night along.
func pushDemo() async throws {
    let clock = TestClock()
    let epoch = Date(timeIntervalSince1970: 1_796_158_800)  // 2026-12-01 21:00 UTC
    let now: @Sendable () -> Date = { epoch.addingTimeInterval(clock.now.offset.inSeconds) }
    let server = MastodonSandboxServer(now: now)
    let http = server.httpServer(clock: clock)
    let alice = await server.addAccount(username: "alice", token: "alice-demo-token")
    let bob = await server.addAccount(username: "bob", token: "bob-demo-token")
    let carol = await server.addAccount(username: "carol", token: "carol-demo-token")
    let delivered = LockedState<[IncomingWebPush]>([])
    server.pushSubscriptions.setSender(
        MastodonSandboxPushSender(
            transport: { request in
                delivered.withLock {
                    $0.append(
                        IncomingWebPush(
                            endpoint: request.url, body: [UInt8](request.body ?? Data()),
                            contentEncoding: request.headers["Content-Encoding"],
                            cryptoKey: request.headers["Crypto-Key"], encryption: request.headers["Encryption"]))
                }
                return HTTPResponse(status: 201, headers: [:], body: Data(), url: request.url)
            }, now: now))
    let router = PushAccountRouter()
    let quiet = NotificationSettings(quietHours: QuietHours(start: (22, 0), end: (7, 0)))
    let aliceAccount = try await PushDemoAccount(
        "alice", token: "alice-demo-token", http: http, clock: clock, epoch: epoch, mode: .content, settings: quiet,
        router: router, now: now)
    let bobAccount = try await PushDemoAccount(
        "bob", token: "bob-demo-token", http: http, clock: clock, epoch: epoch, mode: .wake,
        settings: NotificationSettings(), router: router, now: now)
    for account in [aliceAccount, bobAccount] {
        let status = await account.link.launch(endpoint: account.endpoint)
        guard case .active = status else { throw ToolFailure(ExitCode.software, "subscribing failed: \(status)") }
    }
    print("alice: content mode, quiet hours 22:00–07:00; bob: wake mode. Both subscribed to Web Push.")

    var time: String {
        let seconds = Int(clock.now.offset.inSeconds) + 21 * 3600
        return String(format: "%02d:%02d", (seconds / 3600) % 24, (seconds / 60) % 60)
    }
    // A poll decides again about everything past the marker; what was raised before is not repeated below,
    // except where the duplicate is the point.
    let shown = LockedState<Set<String>>([])
    func line(_ who: String, _ decision: AccountNotificationDecision, always: Bool = false) {
        let key = "\(who) \(decision.serverID.rawValue)"
        let seen = shown.withLock { !$0.insert(key).inserted }
        if case .drop(.alreadyRaised) = decision.decision, seen, !always { return }
        print("  \(who): \(describe(decision))")
    }
    /// Waits for the pushes the sandbox started and routes each by its endpoint, as a push service delivers.
    func routePushes(_ count: Int) async throws {
        _ = await server.pushSubscriptions.deliveries(count: server.pushSubscriptions.pushesStarted)
        let pushes = delivered.withLock { list in
            defer { list.removeAll() }
            return list
        }
        guard pushes.count == count else { throw ToolFailure(ExitCode.software, "\(pushes.count) pushes arrived") }
        for push in pushes {
            let (account, handling) = try await router.route(push)
            let who = String(account.prefix { $0 != "@" })
            switch handling {
            case .decided(let decision):
                shown.withLock { _ = $0.insert("\(who) \(decision.serverID.rawValue)") }
                print("  push → \(who) (content): \(describe(decision))")
            case .woke(let decisions):
                print("  push → \(who) (wake): polled")
                for decision in decisions { line(who, decision) }
            case .wakeRequested: print("  push → \(who) (wake): poll requested")
            case .unusable(let reason, _): print("  push → \(who): unusable (\(reason))")
            }
        }
    }

    print("\(time)  carol mentions alice.")
    await server.post(as: carol, "dinner tomorrow, @alice?", mentioning: [alice])
    try await routePushes(1)
    print("\(time)  alice's next poll finds the same notification:")
    for decision in try await aliceAccount.raiser.pollAndRaise() { line("alice", decision, always: true) }

    await clock.advance(by: .seconds(5 * 60))
    print("\(time)  carol mentions bob.")
    await server.post(as: carol, "@bob the slides are up", mentioning: [bob])
    try await routePushes(1)

    await clock.advance(by: .seconds(5 * 60))
    let post = await server.post(as: bob, "new photo")
    let carolClient = MastodonAPIClient(
        server: URL(string: "https://sandbox.invalid")!, accountKey: "carol@sandbox",
        authorization: MastodonAuthorization(token: "carol-demo-token"),
        transport: MastodonSandboxTransport(server: http),
        now: now)
    let aliceClient = MastodonAPIClient(
        server: URL(string: "https://sandbox.invalid")!, accountKey: "alice-as-client@sandbox",
        authorization: MastodonAuthorization(token: "alice-demo-token"),
        transport: MastodonSandboxTransport(server: http),
        now: now)
    print("\(time)  alice favourites bob's post.")
    _ = try await aliceClient.perform(.favourite, status: ServerID(post))
    try await routePushes(1)
    await clock.advance(by: .seconds(60))
    print("\(time)  carol favourites it too: the group's notification is updated in place.")
    _ = try await carolClient.perform(.favourite, status: ServerID(post))
    try await routePushes(1)

    await clock.advance(by: .seconds(80 * 60))
    print("\(time)  carol mentions alice again, inside alice's quiet hours.")
    await server.post(as: carol, "@alice are you awake?", mentioning: [alice])
    try await routePushes(1)
    let jobs = await aliceAccount.raiser.nextJobTimes()
    print("  alice's next job: \(jobs.first.map { ISO8601DateFormatter().string(from: $0) } ?? "none")")

    let untilSeven = Date(timeIntervalSince1970: 1_796_194_800).timeIntervalSince(now())  // 07:00 UTC
    await clock.advance(by: .seconds(untilSeven))
    print("\(time)  the job at the end of alice's quiet hours polls and releases what was held:")
    for decision in try await aliceAccount.raiser.releaseHeld().decisions { line("alice", decision) }

    await clock.advance(by: .seconds(5 * 60))
    var digest = NotificationSettings(delivery: .digest(hours: [8], urgentMentionsAtOnce: true))
    digest.enabledCategories = NotificationSettings().enabledCategories
    await bobAccount.link.change(settings: digest)
    print("\(time)  bob switches to a digest at 08:00 (no push subscription change is needed).")
    await clock.advance(by: .seconds(10 * 60))
    print("\(time)  carol boosts bob's post.")
    _ = try await carolClient.perform(.reblog, status: ServerID(post))
    try await routePushes(1)
    let untilEight = Date(timeIntervalSince1970: 1_796_198_400).timeIntervalSince(now())  // 08:00 UTC
    await clock.advance(by: .seconds(untilEight))
    print("\(time)  bob's digest job:")
    let (summary, _) = try await bobAccount.raiser.releaseHeld()
    if let summary {
        print("  bob: digest raised (\(summary.identifier)): \(summary.title.text) — \(summary.body.text)")
    } else {
        print("  bob: no digest")
    }
}

/// One decision as a line: what the person sees, or why nothing.
private func describe(_ record: AccountNotificationDecision) -> String {
    let origin = "\(record.origin.rawValue) \(record.serverID.rawValue)"
    switch record.decision {
    case .raise(let request):
        return "raised (\(origin)) \(request.identifier): \(request.title.text) — \(request.body.text)"
    case .update(let request):
        return "updated in place (\(origin)) \(request.identifier): \(request.title.text)"
    case .hold(let until, let reason):
        return "held (\(origin)): \(reason.rawValue) until \(ISO8601DateFormatter().string(from: until))"
    case .drop(let reason): return "not raised (\(origin)): \(reason.rawValue)"
    }
}
