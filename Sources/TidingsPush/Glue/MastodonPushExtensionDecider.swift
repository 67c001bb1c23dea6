import Foundation
import TidingsCore
import TidingsMastodon

/// `MastodonPushExtensionDecider` is the library's entry point for a notification service extension (or any
/// memory-limited second process) that receives one Mastodon Web Push in content mode: it decides what to show
/// with no `MastodonAccountEngine` and no network.
///
/// One ``decide(_:keys:)`` opens the app's store file (no integrity scan, at most `busyTimeout` waiting for the app's
/// lock), reads the account's notifications marker and stored v2 groups, decrypts the push with the account's
/// stored keys (``MastodonWebPushRegistrar``'s, sealed with the store's cipher), derives the push's group
/// (``PushGroupKey``, as the raiser does) and runs ``NotificationPolicyStore/decideAndRecord(_:settings:context:)``
/// in one write transaction, then closes the file.
///
/// Guarantees:
/// - The decision is the one the app's ``MastodonNotificationRaiser`` would make for the same push: the same
///   settings, marker, raised set and group key, so what the poll already raised is not raised again, what the
///   marker covers is dropped, and a stored group grows its notification in place (same request identifier).
/// - A body that does not decrypt, or a payload that names nothing usable, gives
///   ``PushHandling/unusable(reason:generic:)``: the generic notification on Apple (recorded as shown, so the
///   app's next raise withdraws it), nothing elsewhere.
/// - It never waits for the network; the only wait is the store's busy timeout. What only a poll can know (a
///   digest-held mention's author being followed) waits for the app's next poll.
public struct MastodonPushExtensionDecider: Sendable {
    /// The account the pushes are for (the raised set's and the engine's key).
    public let account: String
    /// Settings, content context and zone: the app's ``MastodonNotificationRaiser`` configuration.
    public var configuration: NotificationRaiserConfiguration
    private let path: String
    private let schema: SQLiteSchema
    private let cipher: ValueCipher?
    private let busyTimeout: Duration
    private let now: @Sendable () -> Date

    /// A decider for `account` on the store file at `path`.
    ///
    /// - Parameters:
    ///   - account: The app's account key, as the app's raiser and registrar name the account.
    ///   - path: The app's store file (the app migrated it; opening it here runs no migration the app has not).
    ///   - schema: The app's schema, holding the engine's timeline tables, ``NotificationPolicyStore/tables`` and
    ///     ``PushStoreSchema`` (the same value the app opens the file with).
    ///   - cipher: The store's cipher: the stored keys and groups are sealed with it. Nil only for a store
    ///     without one, which then needs the keys passed to ``decide(_:keys:)``.
    ///   - configuration: The account's notification settings and content context (content mode by default),
    ///     the same the app's raiser decides with.
    ///   - busyTimeout: The longest wait for the app's lock (a second by default: an extension has little time).
    ///   - now: "Now" for the decision.
    public init(
        account: String, path: String, schema: SQLiteSchema, cipher: ValueCipher?,
        configuration: NotificationRaiserConfiguration = NotificationRaiserConfiguration(mode: .content),
        busyTimeout: Duration = .seconds(1), now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.account = account
        self.path = path
        self.schema = schema
        self.cipher = cipher
        self.configuration = configuration
        self.busyTimeout = busyTimeout
        self.now = now
    }

    /// Decides about `push` and records the decision in the store.
    ///
    /// - Parameters:
    ///   - push: The push as received (body and headers), decrypted here.
    ///   - keys: The subscription's keys; nil reads the account's stored keys (the usual case).
    /// - Returns: ``PushHandling/decided(_:)`` or ``PushHandling/unusable(reason:generic:)``.
    /// - Throws: `StoreError` when the store cannot be opened, is busy past the timeout, or fails.
    public func decide(_ push: IncomingWebPush, keys: WebPushSubscriptionKeys? = nil) async throws -> PushHandling {
        let database = try await SQLiteDatabase.open(
            path: path, schema: schema,
            configuration: .init(busyTimeout: busyTimeout, cipher: cipher, checksIntegrityOnOpen: false))
        defer { database.close() }
        let policy = NotificationPolicyStore(database: database)
        let payload: JSONValue
        do {
            var keys = keys
            if keys == nil { keys = try await storedKeys(database) }
            guard let keys else { return try await unusable("no push keys", policy: policy) }
            let plaintext = try WebPushDecryptor(keys: keys).decrypt(
                push.body, contentEncoding: push.contentEncoding, cryptoKey: push.cryptoKey,
                encryption: push.encryption)
            payload = try JSONValue(parsing: plaintext)
        } catch let error as StoreError {
            throw error
        } catch let error as any TidingsError {
            return try await unusable(error.shortDescription, policy: policy)
        } catch {
            return try await unusable("\(type(of: error))", policy: policy)
        }
        guard var candidate = NotificationCandidate(pushPayload: payload, account: account) else {
            return try await unusable("payload without a notification the policy raises", policy: policy)
        }
        let at = now()
        let (marker, groups) = try await storedMarkerAndGroups(database, category: candidate.category)
        let account = self.account
        candidate.groupKey = try await PushGroupKey.key(
            candidate.category, body: payload["body"]?.stringValue ?? "", now: at, groups: groups
        ) { base in try await policy.groupKeys(account: account, prefix: base) }
        let settings = configuration.settings
        let zone = settings.usesLocalTime ? configuration.zone.current() : .zoneInfo(.utc)
        let decision = try await policy.decideAndRecord(
            candidate, settings: settings,
            context: NotificationPolicyContext(now: at, zone: zone, marker: marker, content: configuration.content))
        return .decided(
            AccountNotificationDecision(
                account: account, serverID: candidate.serverID, origin: candidate.origin, decision: decision))
    }

    private func storedKeys(_ database: SQLiteDatabase) async throws -> WebPushSubscriptionKeys? {
        guard let cipher else { return nil }
        return try await MastodonWebPushRegistrar.storedKeys(account: account, database: database, cipher: cipher)
    }

    /// The engine's notifications marker and, for a kind Mastodon groups, its stored v2 groups (newest first),
    /// read in one transaction. The marker's key is the engine's (`MastodonAccountEngine.localMarker`); a test
    /// moves it through a real engine, so a change there fails here.
    private func storedMarkerAndGroups(_ database: SQLiteDatabase, category: NotificationCategory) async throws
        -> (ServerID?, [MastodonGroupPayload])
    {
        let account = self.account
        let markerKey = "mastodon.\(account).\(MastodonMarkerTimeline.notifications.rawValue).read"
        let wantsGroups = PushGroupKey.groupedCategories.contains(category)
        let timeline = MastodonTimelineStore(database: database)
        let (marker, stored) = try await database.read { db in
            let marker = try db.fetchOne(
                ServerID.self, "SELECT value FROM \(SQLiteMarkerStorage.tableName) WHERE key = ?", [markerKey])
            return (marker, wantsGroups ? try timeline.notificationGroups(account: account, in: db) : [])
        }
        // A group that no longer decodes (written by a newer app) only loses the in-place update: skip it.
        let groups = stored.compactMap { try? MastodonWire.decode(MastodonGroupPayload.self, from: $0.payload) }
        return (marker, groups)
    }

    /// The generic notification (Apple), recorded as shown so that the app's next raise and sign-out withdraw it.
    private func unusable(_ reason: String, policy: NotificationPolicyStore) async throws -> PushHandling {
        let generic = NotificationContentBuilder.generic(account: account, context: configuration.content)
        if let generic { try await policy.recordShown(account: account, requestIdentifier: generic.identifier) }
        return .unusable(reason: reason, generic: generic)
    }
}
