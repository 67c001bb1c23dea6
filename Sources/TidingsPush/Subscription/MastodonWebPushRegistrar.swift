import Foundation
import TidingsCore
import TidingsMastodon

/// Where an account's Web Push registration stands after the last reconcile, change or sign-out.
public enum MastodonPushRegistrationStatus: Sendable, Equatable {
    /// The server holds a subscription with this endpoint, these keys and these alerts.
    case active(MastodonPushSubscription)
    /// The last attempt failed (`reason` names the error, never a secret). Nothing was deleted: the keys are
    /// kept and whatever subscription the server still has stays; the next reconcile tries again.
    case failed(reason: String)
    /// The account has no subscription (after sign-out).
    case none

    /// What the tier policy (`MastodonTierPolicy` (TidingsMastodon)) should assume: pushes arrive only while the
    /// registration is active; after a failure the account is polled as if unpushed until a reconcile succeeds.
    public var tierRegistration: MastodonPushRegistration {
        if case .active = self { return .active }
        return .none
    }
}

/// One Mastodon account's Web Push registration: its keys in the durable store (encrypted at rest), and the
/// server's subscription kept in line with what the app wants.
///
/// Guarantees:
/// - Keys are created once per account and stored (sealed with the store's cipher, bound to the account's row)
///   before they are ever sent, so a crash after subscribing never leaves the server with keys this device lost.
/// - ``reconcile(endpoint:alerts:policy:)`` is idempotent: it sends nothing when the server already has this
///   endpoint, these keys, alerts and policy; `PUT` when only alerts or policy changed; `POST` otherwise (which
///   replaces the token's old subscription on the server in one step).
/// - A failure never silently disables push: nothing is deleted before a new subscription is in place, the
///   error is stored and returned as ``MastodonPushRegistrationStatus/failed(reason:)``, and the next reconcile
///   retries.
/// - ``signOut()`` deletes the server's subscription and then the keys; the keys go even when the server cannot
///   be reached (the token is being discarded, and Mastodon drops a token's subscription with it).
public actor MastodonWebPushRegistrar {
    /// The account's stable, non-secret name (the store's key).
    public let account: String
    private let database: SQLiteDatabase
    private let cipher: ValueCipher
    private let client: MastodonPushSubscriptionClient
    private let now: @Sendable () -> Date

    /// The registration of `account` in `database` (opened with ``PushStoreSchema/schema``), its secrets sealed
    /// with `cipher`, talking to the server through `client`.
    public init(
        account: String, database: SQLiteDatabase, cipher: ValueCipher, client: MastodonPushSubscriptionClient,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.account = account
        self.database = database
        self.cipher = cipher
        self.client = client
        self.now = now
    }

    /// The account's keys: read from the store, or made and stored now.
    ///
    /// - Throws: `StoreError` when the store fails or a sealed value does not open (wrong key, tampered row);
    ///   ``WebPushError`` when stored bytes are not keys.
    public func keys() async throws -> WebPushSubscriptionKeys {
        if let stored = try await storedKeys() { return stored }
        let keys = try WebPushSubscriptionKeys.generate()
        let account = self.account
        let sealed = try SealedPushKeys(
            sealing: keys, table: PushStoreSchema.registrations, account: account, cipher: cipher)
        let stamp = Int64(now().timeIntervalSince1970)
        // The actor is reentrant across the store's awaits: two first calls may both get here. The row that
        // lands first wins and both return it, so one account never has two key pairs.
        try await database.write { db in
            try db.execute(
                "INSERT OR IGNORE INTO push_mastodon_registrations(account, private_key, auth, public_key, updated_at) "
                    + "VALUES (?, ?, ?, ?, ?)",
                values: account, sealed.privateKey, sealed.auth, sealed.publicKey, stamp)
        }
        return try await storedKeys() ?? keys
    }

    private func storedKeys() async throws -> WebPushSubscriptionKeys? {
        try await Self.storedKeys(account: account, database: database, cipher: cipher)
    }

    /// The keys stored for `account` in `database`, opened with `cipher`, or nil when it has none: what a
    /// notification extension decrypts with (``MastodonPushExtensionDecider``), reading only (no key is made).
    ///
    /// - Throws: `StoreError` when the store fails or a sealed value does not open (wrong key, tampered row);
    ///   ``WebPushError`` when stored bytes are not keys.
    static func storedKeys(account: String, database: SQLiteDatabase, cipher: ValueCipher) async throws
        -> WebPushSubscriptionKeys?
    {
        try await database.read { db in
            try SealedPushKeys.open(db, table: PushStoreSchema.registrations, account: account, cipher: cipher)
        }
    }

    private struct Subscribed: Sendable {
        var endpoint: String?
        var publicKey: String?
    }

    private func subscribed() async throws -> Subscribed {
        let account = self.account
        return try await database.read { db in
            try db.fetchOne(
                "SELECT subscribed_endpoint, subscribed_public_key FROM push_mastodon_registrations WHERE account = ?",
                [account]
            ) { row in
                Subscribed(
                    endpoint: try String?(databaseColumn: row.column(0)),
                    publicKey: try String?(databaseColumn: row.column(1)))
            } ?? Subscribed()
        }
    }

    /// Brings the server's subscription in line with `endpoint`, `alerts` and `policy` (at launch, and whenever
    /// the platform hands out a new endpoint).
    public func reconcile(endpoint: URL, alerts: MastodonPushAlerts, policy: MastodonPushPolicy) async
        -> MastodonPushRegistrationStatus
    {
        do {
            let keys = try await keys()
            let subscribed = try await subscribed()
            let current = try await client.current()
            let result: MastodonPushSubscription
            if let current, current.endpoint == endpoint.absoluteString,
                subscribed.publicKey == keys.base64URLPublicKey, subscribed.endpoint == current.endpoint
            {
                if current.alerts == alerts, current.policy == nil || current.policy == policy {
                    result = current
                } else {
                    result = try await client.update(alerts: alerts, policy: policy)
                }
            } else {
                result = try await client.subscribe(endpoint: endpoint, keys: keys, alerts: alerts, policy: policy)
            }
            try await record(result, publicKey: keys.base64URLPublicKey, policy: policy)
            return .active(result)
        } catch {
            return await fail(error)
        }
    }

    /// Sends changed category switches to the server (`PUT`), keeping endpoint and keys.
    public func change(alerts: MastodonPushAlerts, policy: MastodonPushPolicy) async -> MastodonPushRegistrationStatus {
        do {
            let keys = try await keys()
            let result = try await client.update(alerts: alerts, policy: policy)
            try await record(result, publicKey: keys.base64URLPublicKey, policy: policy)
            return .active(result)
        } catch {
            return await fail(error)
        }
    }

    /// Deletes the server's subscription, then the account's keys and row.
    ///
    /// - Returns: ``MastodonPushRegistrationStatus/none``, or ``MastodonPushRegistrationStatus/failed(reason:)``
    ///   when the server could not be told (the keys are deleted all the same).
    /// - Throws: `StoreError` when the row cannot be deleted.
    public func signOut() async throws -> MastodonPushRegistrationStatus {
        var status = MastodonPushRegistrationStatus.none
        do {
            try await client.unsubscribe()
        } catch {
            status = .failed(reason: Self.reason(error))
        }
        let account = self.account
        try await database.write { db in
            try db.execute("DELETE FROM push_mastodon_registrations WHERE account = ?", [account])
        }
        return status
    }

    /// What the store says about the account: the last error, if the last attempt failed.
    public func lastError() async throws -> String? {
        let account = self.account
        return try await database.read { db in
            try db.fetchOne(
                "SELECT last_error FROM push_mastodon_registrations WHERE account = ?", [account]
            ) { row in try String?(databaseColumn: row.column(0)) } ?? nil
        }
    }

    private func record(_ subscription: MastodonPushSubscription, publicKey: String, policy: MastodonPushPolicy)
        async throws
    {
        let account = self.account
        let stamp = Int64(now().timeIntervalSince1970)
        try await database.write { db in
            try db.execute(
                """
                UPDATE push_mastodon_registrations SET subscribed_endpoint = ?, subscribed_public_key = ?,
                    subscribed_alerts = ?, subscribed_policy = ?, server_id = ?, server_key = ?, standard = ?,
                    last_error = NULL, updated_at = ? WHERE account = ?
                """,
                [
                    subscription.endpoint, publicKey, subscription.alerts.storedText, policy.rawValue, subscription.id,
                    subscription.serverKey, subscription.standard ? 1 : 0, stamp, account,
                ])
        }
    }

    private func fail(_ error: any Error) async -> MastodonPushRegistrationStatus {
        let reason = Self.reason(error)
        let account = self.account
        let stamp = Int64(now().timeIntervalSince1970)
        // Best effort: the status returned carries the reason even when the store cannot keep it.
        _ = try? await database.write { db in
            try db.execute(
                "UPDATE push_mastodon_registrations SET last_error = ?, updated_at = ? WHERE account = ?",
                [reason, stamp, account])
        }
        return .failed(reason: reason)
    }

    private static func reason(_ error: any Error) -> String {
        (error as? any TidingsError)?.description ?? "\(type(of: error))"
    }
}
