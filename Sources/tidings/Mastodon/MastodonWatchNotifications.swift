import Foundation
import TidingsCore
import TidingsMastodon
import TidingsPush
import TidingsSandbox
import TidingsSandboxKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The notification side of `tidings mastodon watch`: the account's `MastodonNotificationRaiser` (every poll
/// the watch makes goes through the notification policy; the raised set is kept in `<store>.notifications`, so
/// a second run raises nothing twice) and, unless `--push off`, `tidings push listen`'s loopback Web Push
/// endpoint subscribed with the server, each push routed to the raiser by its endpoint. The push keys live in
/// memory only: every run subscribes anew, which replaces the token's previous subscription on the server.
struct MastodonWatchNotifications: Sendable {
    let raiser: MastodonNotificationRaiser
    let policyDatabase: SQLiteDatabase
    let pushDatabase: SQLiteDatabase
    let listener: SandboxHTTPListener?
    let router: PushAccountRouter
    let pushAccount: MastodonPushAccount?
    let subscription: MastodonPushRegistrationStatus?
    let pushes: Task<Void, Never>?

    /// Opens the raised set, starts the endpoint and subscribes (when `mode` is not nil).
    ///
    /// - Throws: ``ToolFailure`` when the raised-set file cannot be opened (74) or the endpoint cannot listen.
    static func start(
        engine: MastodonAccountEngine, client: MastodonAPIClient, store: String, mode: PushDeliveryMode?
    ) async throws -> MastodonWatchNotifications {
        let path = store + ".notifications"
        let policyDatabase: SQLiteDatabase
        do {
            policyDatabase = try await SQLiteDatabase.open(path: path, schema: NotificationPolicyStore.schema)
        } catch {
            throw ToolFailure(ExitCode.ioError, "Cannot open the raised set \(path): \(error)")
        }
        let pushDatabase = try SQLiteDatabase.inMemory(schema: PushStoreSchema.schema)
        let registrar = MastodonWebPushRegistrar(
            account: engine.account, database: pushDatabase, cipher: try ValueCipher(key: .random()),
            client: MastodonPushSubscriptionClient(api: client))
        let raiser = MastodonNotificationRaiser(
            engine: engine, policy: NotificationPolicyStore(database: policyDatabase),
            clock: NotificationPolicyClock(ContinuousClock(), origin: Date()),
            configuration: NotificationRaiserConfiguration(
                mode: mode ?? .wake,
                content: NotificationContentContext(platform: .android, accountHandle: engine.account)),
            pushKeys: { try await registrar.keys() })
        let router = PushAccountRouter()
        guard mode != nil else {
            return MastodonWatchNotifications(
                raiser: raiser, policyDatabase: policyDatabase, pushDatabase: pushDatabase, listener: nil,
                router: router, pushAccount: nil, subscription: nil, pushes: nil)
        }
        let (received, continuation) = AsyncStream.makeStream(of: SandboxWebPushEndpoint.Message.self)
        let endpoint = SandboxWebPushEndpoint(onMessage: { continuation.yield($0) })
        endpoint.register("watch", keys: try await registrar.keys())
        let listener: SandboxHTTPListener
        do {
            listener = try endpoint.httpServer().serve(port: 0)
        } catch {
            throw ToolFailure(ExitCode.software, "Cannot listen for Web Push on loopback: \(error)")
        }
        let url = URL(string: "\(listener.url.absoluteString)push/watch")!
        let pushAccount = MastodonPushAccount(raiser: raiser, registrar: registrar, router: router)
        let status = await pushAccount.launch(endpoint: url)
        let pushes = Task {
            for await message in received {
                // The endpoint checked VAPID already; a push it refused is not routed.
                guard message.failure == nil else { continue }
                _ = try? await router.route(
                    IncomingWebPush(
                        endpoint: url, body: message.body, contentEncoding: message.contentEncoding,
                        cryptoKey: message.cryptoKey, encryption: message.encryption))
            }
        }
        return MastodonWatchNotifications(
            raiser: raiser, policyDatabase: policyDatabase, pushDatabase: pushDatabase, listener: listener,
            router: router, pushAccount: pushAccount, subscription: status, pushes: pushes)
    }

    /// What the ready line says about push: `off`, `subscribed <mode>`, or `failed: <reason>`.
    var pushSummary: String {
        switch subscription {
        case nil: "off"
        case .active?: "subscribed"
        case .failed(let reason)?: "failed: \(reason)"
        case MastodonPushRegistrationStatus.none?: "off"
        }
    }

    /// Stops the endpoint and closes the files.
    func stop() async {
        pushes?.cancel()
        listener?.stop()
        await raiser.stopFollowingPolls()
        policyDatabase.close()
        pushDatabase.close()
    }
}

/// One line per notification the policy shows (raise, update, the digest, the generic one) or withdraws;
/// holds and drops are printed as `held` / `not raised` with the reason so that a run can be followed.
func printNotificationEvent(_ event: AccountNotificationEvent, json: Bool) {
    func emitLine(_ object: [String: Any], _ text: String) {
        if json { JSONLines.emit(object) } else { print(text) }
        fflush(nil)
    }
    switch event {
    case .decided(let record):
        let origin = record.origin.rawValue
        let id = record.serverID.rawValue
        switch record.decision {
        case .raise(let request), .update(let request):
            let verb = record.decision.label
            emitLine(
                [
                    "type": "notification", "decision": verb, "origin": origin, "id": id,
                    "identifier": request.identifier, "title": request.title.text, "body": request.body.text,
                ],
                "notification (\(verb), \(origin) \(id)): \(request.title.text)"
                    + (request.body.text.isEmpty ? "" : " — \(request.body.text)"))
        case .hold(let until, let reason):
            emitLine(
                [
                    "type": "notification", "decision": "hold", "origin": origin, "id": id,
                    "reason": reason.rawValue, "until": ISO8601DateFormatter().string(from: until),
                ], "held (\(origin) \(id)): \(reason.rawValue) until \(ISO8601DateFormatter().string(from: until))")
        case .drop(let reason):
            emitLine(
                ["type": "notification", "decision": "drop", "origin": origin, "id": id, "reason": reason.rawValue],
                "not raised (\(origin) \(id)): \(reason.rawValue)")
        }
    case .digest(let request):
        emitLine(
            ["type": "notification", "decision": "digest", "title": request.title.text, "body": request.body.text],
            "notification (digest): \(request.title.text) — \(request.body.text)")
    case .generic(let request):
        emitLine(
            ["type": "notification", "decision": "generic", "title": request.title.text],
            "notification (generic): \(request.title.text) — \(request.body.text)")
    case .withdraw(let signOut):
        emitLine(
            ["type": "withdraw", "identifiers": signOut.withdrawRequestIdentifiers],
            "withdraw: \(signOut.withdrawRequestIdentifiers.joined(separator: ", "))")
    case .withdrawRaised(let identifiers):
        emitLine(
            ["type": "withdraw", "identifiers": identifiers], "withdraw: \(identifiers.joined(separator: ", "))")
    case .missed(let count):
        emitLine(["type": "missed", "count": count], "missed: \(count) notification events")
    }
}

extension NotificationDecision {
    /// `raise`, `update`, `hold` or `drop`.
    var label: String {
        switch self {
        case .raise: "raise"
        case .update: "update"
        case .hold: "hold"
        case .drop: "drop"
        }
    }
}
