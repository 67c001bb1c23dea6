import Foundation
import TidingsCore

/// Where an account's Nextcloud Web Push subscription stands after a reconcile.
public enum NextcloudWebPushDeviceStatus: Sendable, Hashable {
    /// Registered; the activation push has not come yet (pushes flow once it has).
    case awaitingActivation
    /// Active: notifications flow.
    case active
    /// The administrator has not enabled Web Push (403 `WEBPUSH_DISABLED`); the account is polled, and the next
    /// reconcile asks again.
    case disabledByAdministrator
    /// The last attempt failed (`reason` names the error, never a secret). A stored subscription is kept (the
    /// server may still push to it) and the next reconcile tries again.
    case failed(reason: String)

    init(_ state: NextcloudWebPushState) {
        switch state {
        case .awaitingActivation: self = .awaitingActivation
        case .active: self = .active
        case .disabledByAdministrator: self = .disabledByAdministrator
        }
    }
}

/// What one push to a Nextcloud Web Push subscription held, once opened.
public enum NextcloudWebPushMessage: Sendable, Hashable {
    /// The activation push: its token went back to the server (`POST …/webpush/activate`), and this is the state
    /// the subscription is now in (stored).
    case activated(NextcloudWebPushState)
    /// A notification or a withdrawal, in the proxy's subject shape: hand it to ``NextcloudPushHandler/handle(_:)``.
    case subject(NextcloudProxySubject)
}

/// One Nextcloud account's Web Push (UnifiedPush-style) subscription on this device, kept in the durable push store
/// (``PushStoreSchema/schema``, table `push_nextcloud_webpush`) as ``NextcloudProxyDevice`` keeps the proxy's: the
/// subscription's P-256 key pair and auth secret (sealed with the app's `ValueCipher`, bound to the table, column
/// and account), what it was registered for (endpoint, `appTypes`, public key, server, user) and where it stands
/// (awaiting activation, active, disabled by the administrator).
///
/// Guarantees:
/// - The keys are made once per account (two first calls get the same keys) and kept across relaunches and new
///   endpoints, so a push sent to an older registration still opens.
/// - ``reconcile(endpoint:appTypes:)`` is idempotent: when the stored subscription was registered for this
///   endpoint, filter, key, server and user and is active (or awaits its activation, for less than
///   ``activationPatience``) it sends nothing; otherwise it registers. A subscription disabled by the administrator
///   is asked again at every reconcile.
/// - A failed reconcile never silently disables push: the stored subscription stays, the error is stored and
///   returned as ``NextcloudWebPushDeviceStatus/failed(reason:)``, and the next reconcile tries again.
/// - ``open(_:)`` decrypts with the stored keys only; the activation push is sent back to the server and the state
///   stored, in any process sharing the store. A push that does not open is a typed error and changes nothing.
/// - ``signOut()`` unregisters at the server, then deletes the row, keys included, even when the server cannot be
///   told.
public actor NextcloudWebPushDevice {
    /// How long a registration may wait for its activation push before a reconcile registers again (the server
    /// then sends a new token): a push lost on the way must not leave the account unpushed for good.
    public static let activationPatience: TimeInterval = 600

    /// The account's stable, non-secret name (the store's key).
    public let account: String
    /// The registrar that talks to the account's server.
    public let registrar: NextcloudWebPushRegistrar
    private let database: SQLiteDatabase
    private let cipher: ValueCipher
    private let now: @Sendable () -> Date
    private static let table = PushStoreSchema.nextcloudWebPush

    /// The subscription of `account` in `database` (opened with ``PushStoreSchema/schema``).
    ///
    /// - Parameters:
    ///   - account: The app's account key.
    ///   - database: The push store.
    ///   - cipher: Seals the private key and the auth secret at rest.
    ///   - registrar: The account's registrar (its server and credentials).
    ///   - now: The time stamped on rows (and read for ``activationPatience``).
    public init(
        account: String, database: SQLiteDatabase, cipher: ValueCipher, registrar: NextcloudWebPushRegistrar,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.account = account
        self.database = database
        self.cipher = cipher
        self.registrar = registrar
        self.now = now
    }

    /// The subscription's keys: read from the store, or made and stored now.
    ///
    /// - Throws: `StoreError` when the store fails or a sealed value does not open; ``WebPushError`` when stored
    ///   bytes are not keys.
    public func keys() async throws -> WebPushSubscriptionKeys {
        let (account, cipher, stamp) = (self.account, self.cipher, Int64(now().timeIntervalSince1970))
        return try await database.write { db in
            if let stored = try SealedPushKeys.open(db, table: Self.table, account: account, cipher: cipher) {
                return stored
            }
            let keys = try WebPushSubscriptionKeys.generate()
            let sealed = try SealedPushKeys(sealing: keys, table: Self.table, account: account, cipher: cipher)
            try db.execute(
                "INSERT INTO \(Self.table)(account, private_key, auth, public_key, updated_at) VALUES (?, ?, ?, ?, ?)",
                values: account, sealed.privateKey, sealed.auth, sealed.publicKey, stamp)
            return keys
        }
    }

    /// The stored subscription's state; nil when it is not registered (never, or signed out).
    ///
    /// - Throws: `StoreError`.
    public func status() async throws -> NextcloudWebPushState? { try await stored()?.state }

    /// At launch and whenever the distributor hands out an endpoint: registers `endpoint` for `appTypes` (`all`,
    /// or e.g. `all,-spreed`) with the account's keys unless the stored subscription already holds it. Never
    /// throws: a failure is the returned status (and stored).
    public func reconcile(endpoint: URL, appTypes: String = "all") async -> NextcloudWebPushDeviceStatus {
        do {
            let keys = try await keys()
            let wanted = Registered(
                endpoint: endpoint.absoluteString, appTypes: appTypes, publicKey: keys.base64URLPublicKey,
                serverURL: registrar.serverURL.absoluteString, user: registrar.user)
            if let stored = try await stored(), stored.registered == wanted, let state = stored.state,
                stillHolds(state, since: stored.updatedAt)
            {
                if stored.lastError != nil { try await setLastError(nil) }
                return NextcloudWebPushDeviceStatus(state)
            }
            let subscription = NextcloudWebPushSubscription(
                endpoint: endpoint, uaPublicKey: keys.base64URLPublicKey, auth: keys.base64URLAuthSecret)
            let state = try await registrar.register(subscription, appTypes: appTypes)
            try await write(state, registered: wanted)
            return NextcloudWebPushDeviceStatus(state)
        } catch {
            return await fail(error)
        }
    }

    /// Opens a push delivered to the subscription's endpoint with the stored keys: the activation push activates
    /// the subscription (sent to the server, the state stored); anything else is a subject.
    ///
    /// - Throws: ``NextcloudPushError/notRegistered`` when no keys are stored; ``WebPushError`` when the body does
    ///   not decrypt; ``NextcloudPushError`` for a plaintext that is neither an activation nor a subject, or when
    ///   the activation is refused; `StoreError`. Nothing is stored then.
    public func open(_ push: IncomingWebPush) async throws -> NextcloudWebPushMessage {
        let (account, cipher) = (self.account, self.cipher)
        let stored = try await database.read { db in
            try SealedPushKeys.open(db, table: Self.table, account: account, cipher: cipher)
        }
        guard let keys = stored else { throw NextcloudPushError.notRegistered }
        let plaintext = try WebPushDecryptor(keys: keys).decrypt(
            push.body, contentEncoding: push.contentEncoding, cryptoKey: push.cryptoKey, encryption: push.encryption)
        if let value = try? JSONValue(parsing: plaintext, maximumDepth: 4), value["activationToken"] != nil {
            let state = try await registrar.activate(decryptedPush: plaintext)
            try await writeState(state)
            return .activated(state)
        }
        return .subject(try NextcloudProxySubject(decryptedJSON: plaintext))
    }

    /// Unregisters at the server, then deletes the account's row (keys included).
    ///
    /// - Returns: nil, or the reason the server could not be told (the row is deleted all the same).
    /// - Throws: `StoreError` when the row cannot be read or deleted.
    public func signOut() async throws -> String? {
        var reason: String?
        if try await stored()?.state != nil {
            do {
                try await registrar.unregister()
            } catch {
                reason = error.description
            }
        }
        let account = self.account
        try await database.write { db in try db.execute("DELETE FROM \(Self.table) WHERE account = ?", [account]) }
        return reason
    }

    /// The last reconcile's error, when it failed.
    ///
    /// - Throws: `StoreError`.
    public func lastError() async throws -> String? { try await stored()?.lastError }

    // MARK: Rows

    private struct Registered: Sendable, Equatable {
        var endpoint: String?
        var appTypes: String?
        var publicKey: String?
        var serverURL: String?
        var user: String?
    }

    private struct Stored: Sendable {
        var registered: Registered
        var state: NextcloudWebPushState?
        var lastError: String?
        var updatedAt: Int64
    }

    private func stillHolds(_ state: NextcloudWebPushState, since stamp: Int64) -> Bool {
        switch state {
        case .active: true
        case .awaitingActivation: now().timeIntervalSince1970 - Double(stamp) < Self.activationPatience
        case .disabledByAdministrator: false
        }
    }

    private static func encode(_ state: NextcloudWebPushState) -> String {
        switch state {
        case .awaitingActivation: "awaitingActivation"
        case .active: "active"
        case .disabledByAdministrator: "disabledByAdministrator"
        }
    }

    private static func decode(_ name: String?) -> NextcloudWebPushState? {
        switch name {
        case "awaitingActivation": .awaitingActivation
        case "active": .active
        case "disabledByAdministrator": .disabledByAdministrator
        default: nil
        }
    }

    private func stored() async throws -> Stored? {
        let account = self.account
        return try await database.read { db in
            try db.fetchOne(
                """
                SELECT endpoint, app_types, public_key, server_url, user, state, last_error, updated_at
                FROM \(Self.table) WHERE account = ?
                """, [account]
            ) { row in
                let text = { (index: Int) throws -> String? in try String?(databaseColumn: row.column(index)) }
                let registered = Registered(
                    endpoint: try text(0), appTypes: try text(1), publicKey: try text(2), serverURL: try text(3),
                    user: try text(4))
                return Stored(
                    registered: registered, state: Self.decode(try text(5)), lastError: try text(6),
                    updatedAt: try Int64(databaseColumn: row.column(7)))
            }
        }
    }

    private func write(_ state: NextcloudWebPushState, registered: Registered) async throws {
        let (account, stamp) = (self.account, Int64(now().timeIntervalSince1970))
        try await database.write { db in
            try db.execute(
                """
                UPDATE \(Self.table) SET endpoint = ?, app_types = ?, server_url = ?, user = ?, state = ?,
                    last_error = NULL, updated_at = ? WHERE account = ?
                """,
                [
                    registered.endpoint, registered.appTypes, registered.serverURL, registered.user,
                    Self.encode(state), stamp, account,
                ])
        }
    }

    private func writeState(_ state: NextcloudWebPushState) async throws {
        let (account, stamp) = (self.account, Int64(now().timeIntervalSince1970))
        try await database.write { db in
            try db.execute(
                "UPDATE \(Self.table) SET state = ?, last_error = NULL, updated_at = ? WHERE account = ?",
                [Self.encode(state), stamp, account])
        }
    }

    private func fail(_ error: any Error) async -> NextcloudWebPushDeviceStatus {
        let reason = (error as? any TidingsError)?.description ?? "\(type(of: error))"
        // Best effort: the status carries the reason even when the store cannot keep it.
        _ = try? await setLastError(reason)
        return .failed(reason: reason)
    }

    /// Sets or clears the stored error; the state and its time stay (the activation's patience runs on).
    private func setLastError(_ reason: String?) async throws {
        let account = self.account
        try await database.write { db in
            try db.execute("UPDATE \(Self.table) SET last_error = ? WHERE account = ?", [reason, account])
        }
    }
}

extension NextcloudWebPushDevice: PushRegistrationWithdrawing {
    /// `nextcloud-webpush`.
    public nonisolated var registrationName: String { "nextcloud-webpush" }

    /// ``signOut()``: at the server, then the row and keys.
    ///
    /// - Throws: ``PushRegistrationWithdrawalError`` when the server could not be told (the row is deleted all the
    ///   same), `StoreError` when the row could not be deleted.
    public func withdrawRegistration() async throws {
        if let reason = try await signOut() {
            throw PushRegistrationWithdrawalError.serverNotTold(registrationName, reason: reason)
        }
    }
}
