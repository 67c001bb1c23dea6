import Foundation
import TidingsCore
import TidingsNet

/// Where an account's Nextcloud proxy registration stands after the last reconcile or sign-out.
public enum NextcloudProxyDeviceStatus: Sendable, Hashable {
    /// The server and the proxy hold this registration for the current push token, key and server.
    case active(NextcloudProxyRegistration)
    /// The last attempt failed (`reason` names the error, never a secret). The stored registration, if any,
    /// is kept and the next reconcile tries again; meanwhile the account is polled.
    case failed(reason: String)
    /// No registration (never registered, or signed out).
    case none

    /// Whether pushes can be expected: only while the registration is active.
    public var isActive: Bool {
        if case .active = self { return true }
        return false
    }
}

/// One Nextcloud account's proxy push on this device, kept in the durable push store
/// (``PushStoreSchema/schema``, table `push_nextcloud_devices`): the RSA-2048 device key, the registration
/// the server answered (its public key for the user, `deviceIdentifier`, signature, proxy server), what it was
/// registered for (push-token hash, key, server, user) and the account's last connection state.
///
/// Guarantees:
/// - The device key is made once per account, on the store's queue, in the transaction that stores it (two
///   first calls get the same key). With a `ValueCipher` it is sealed, bound to the table, column and account;
///   without one it is stored as PEM (the store file is 0600 either way). A key sealed earlier and opened
///   without the cipher is ``NextcloudPushError/keyUnavailable``, with another one a `StoreError`, never a silent new key.
/// - ``reconcile(pushToken:proxyServer:)`` is idempotent: when the stored registration was made for this push
///   token, key, server, user and proxy it sends nothing; otherwise it registers (server, then proxy).
/// - A failed reconcile never silently disables push: the stored registration stays (the server may still
///   push to it), the error is stored and returned as ``NextcloudProxyDeviceStatus/failed(reason:)``, and the
///   next reconcile tries again.
/// - ``signOut()`` deletes at the server and the proxy, then the row (key included) even when they cannot be
///   told: the app password goes with the account, and the server drops a session's devices with it.
public actor NextcloudProxyDevice {
    /// The account's stable, non-secret name (the store's key).
    public let account: String
    /// The registrar that talks to the account's server and its proxy.
    public let registrar: NextcloudProxyRegistrar
    private let database: SQLiteDatabase
    private let cipher: ValueCipher?
    private let now: @Sendable () -> Date
    private static let table = PushStoreSchema.nextcloudDevices

    /// The device of `account` in `database` (opened with ``PushStoreSchema/schema``).
    ///
    /// - Parameters:
    ///   - account: The app's account key.
    ///   - database: The push store.
    ///   - cipher: Seals the device key at rest; nil stores it as PEM in the 0600 store file.
    ///   - registrar: The account's registrar (its server and credentials).
    ///   - now: The time stamped on rows.
    public init(
        account: String, database: SQLiteDatabase, cipher: ValueCipher?, registrar: NextcloudProxyRegistrar,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.account = account
        self.database = database
        self.cipher = cipher
        self.registrar = registrar
        self.now = now
    }

    // MARK: Key

    /// The account's device key: read from the store, or made and stored now (on the store's queue).
    ///
    /// - Throws: `StoreError` when the store fails or a sealed key does not open (another cipher);
    ///   ``NextcloudPushError/keyUnavailable`` when it is sealed and no cipher was given; `CryptoError` when
    ///   stored bytes are not an RSA key or generation fails.
    public func deviceKey() async throws -> NextcloudDeviceKey {
        let (account, cipher, stamp) = (self.account, self.cipher, Int64(now().timeIntervalSince1970))
        let pem = try await database.write { db -> String in
            if let stored = try Self.storedKeyPEM(db, account: account, cipher: cipher) { return stored }
            let key = try NextcloudDeviceKey()
            let pem = key.pemRepresentation
            let stored: SQLiteValue =
                try cipher.map {
                    try $0.seal(pem, table: Self.table, column: "private_key", rowID: account).databaseValue
                } ?? .blob(Array(pem.utf8))
            try db.execute(
                "INSERT INTO \(Self.table)(account, private_key, key_sealed, updated_at) VALUES (?, ?, ?, ?)",
                [account, stored, cipher == nil ? 0 : 1, stamp])
            return pem
        }
        return try NextcloudDeviceKey(pemRepresentation: pem)
    }

    private static func storedKeyPEM(_ db: SQLiteConnection, account: String, cipher: ValueCipher?) throws -> String? {
        let row = try db.fetchOne("SELECT private_key, key_sealed FROM \(table) WHERE account = ?", [account]) {
            row in (try [UInt8](databaseColumn: row.column(0)), try Int64(databaseColumn: row.column(1)))
        }
        guard let (bytes, sealed) = row else { return nil }
        guard sealed != 0 else { return String(decoding: bytes, as: UTF8.self) }
        guard let cipher else {
            throw NextcloudPushError(.keyUnavailable, detail: "the device key is sealed and no cipher was given")
        }
        return try cipher.openString(
            SealedValue(bytes: bytes), table: table, column: "private_key", rowID: account)
    }

    // MARK: Registration

    /// The stored registration (whatever the last reconcile's outcome), if any.
    ///
    /// - Throws: `StoreError`.
    public func registration() async throws -> NextcloudProxyRegistration? {
        try await stored()?.registration
    }

    /// A decryptor for the stored registration's pushes (device key and the account's public key), if registered.
    ///
    /// - Throws: `StoreError`, `CryptoError` for a stored key that does not parse.
    public func decryptor() async throws -> NextcloudProxyPushDecryptor? {
        guard let registration = try await registration() else { return nil }
        return NextcloudProxyPushDecryptor(
            deviceKey: try await deviceKey().privateKey,
            userPublicKey: try TidingsCrypto.RSA.PublicKey(pemRepresentation: registration.userPublicKey))
    }

    /// At launch and whenever the platform hands out a new push token: registers with the server (and the proxy
    /// when the server answers 201) unless the stored registration was made for this token, key, server, user and
    /// proxy. Never throws: a failure is the returned status (and stored).
    public func reconcile(pushToken: String, proxyServer: URL) async -> NextcloudProxyDeviceStatus {
        do {
            let key = try await deviceKey()
            let wanted = Registered(
                pushTokenHash: NextcloudProxyRegistration.pushTokenHash(pushToken),
                proxyServer: proxyServer.absoluteString, registeredKey: key.publicKeyPEM,
                serverURL: registrar.serverURL.absoluteString, user: registrar.credentials.user)
            if let stored = try await stored(), stored.registered == wanted, let registration = stored.registration {
                if stored.lastError != nil { try await write(registration, wanted) }
                return .active(registration)
            }
            let registration = try await registrar.register(
                pushToken: pushToken, deviceKey: key, proxyServer: proxyServer)
            try await write(registration, wanted)
            return .active(registration)
        } catch {
            return await fail(error)
        }
    }

    /// Deletes the registration at the server and the proxy, then the account's row (its key included).
    ///
    /// - Returns: ``NextcloudProxyDeviceStatus/none``, or ``NextcloudProxyDeviceStatus/failed(reason:)`` when the
    ///   server or the proxy could not be told (the row is deleted all the same).
    /// - Throws: `StoreError` when the row cannot be read or deleted.
    public func signOut() async throws -> NextcloudProxyDeviceStatus {
        var status = NextcloudProxyDeviceStatus.none
        if let registration = try await registration() {
            do {
                try await registrar.unregister(registration)
            } catch {
                status = .failed(reason: error.description)
            }
        }
        let account = self.account
        try await database.write { db in try db.execute("DELETE FROM \(Self.table) WHERE account = ?", [account]) }
        return status
    }

    /// The last reconcile's error, when it failed.
    ///
    /// - Throws: `StoreError`.
    public func lastError() async throws -> String? { try await stored()?.lastError }

    // MARK: Connection state

    /// Keeps the account's connection state (`.connecting` is stored as `.disconnected`: an attempt does not
    /// survive a relaunch), so a relaunched app shows the last known state before it connects again. The account's
    /// row is created first when there is none (its device key with it).
    ///
    /// - Throws: `StoreError`.
    public func saveConnection(_ state: NextcloudConnectionState) async throws {
        _ = try await deviceKey()
        let (name, detail) = Self.encode(state)
        let (account, stamp) = (self.account, Int64(now().timeIntervalSince1970))
        try await database.write { db in
            try db.execute(
                "UPDATE \(Self.table) SET connection = ?, connection_detail = ?, updated_at = ? WHERE account = ?",
                [name, detail, stamp, account])
        }
    }

    /// The stored connection state (`.disconnected` when none was saved).
    ///
    /// - Throws: `StoreError`.
    public func savedConnection() async throws -> NextcloudConnectionState {
        let account = self.account
        let row = try await database.read { db in
            try db.fetchOne("SELECT connection, connection_detail FROM \(Self.table) WHERE account = ?", [account]) {
                row in (try String(databaseColumn: row.column(0)), try String?(databaseColumn: row.column(1)))
            }
        }
        guard let (name, detail) = row else { return .disconnected }
        return Self.decode(name, detail)
    }

    static func encode(_ state: NextcloudConnectionState) -> (String, String?) {
        switch state {
        case .disconnected, .connecting: ("disconnected", nil)
        case .connected(let capabilities): ("connected", capabilities.push.sorted().joined(separator: "\n"))
        case .failed(let reason): ("failed", reason)
        }
    }

    static func decode(_ name: String, _ detail: String?) -> NextcloudConnectionState {
        switch name {
        case "connected":
            let list = detail.map { $0.split(separator: "\n").map(String.init) } ?? []
            return .connected(NextcloudPushCapabilities(push: Set(list)))
        case "failed": return .failed(reason: detail ?? "")
        default: return .disconnected
        }
    }

    // MARK: Rows

    private struct Registered: Sendable, Equatable {
        var pushTokenHash: String?
        var proxyServer: String?
        var registeredKey: String?
        var serverURL: String?
        var user: String?
    }

    private struct Stored: Sendable {
        var registered: Registered
        var registration: NextcloudProxyRegistration?
        var lastError: String?
    }

    private func stored() async throws -> Stored? {
        let account = self.account
        return try await database.read { db in
            try db.fetchOne(
                """
                SELECT push_token_hash, proxy_server, registered_key, server_url, user, user_public_key,
                    device_identifier, signature, last_error FROM \(Self.table) WHERE account = ?
                """, [account]
            ) { row in
                let text = { (index: Int) throws -> String? in try String?(databaseColumn: row.column(index)) }
                let registered = Registered(
                    pushTokenHash: try text(0), proxyServer: try text(1), registeredKey: try text(2),
                    serverURL: try text(3), user: try text(4))
                var registration: NextcloudProxyRegistration?
                if let userKey = try text(5), let identifier = try text(6), let signature = try text(7),
                    let proxy = registered.proxyServer.flatMap(URL.init(string:))
                {
                    registration = NextcloudProxyRegistration(
                        userPublicKey: userKey, deviceIdentifier: identifier, signature: signature, proxyServer: proxy)
                }
                return Stored(registered: registered, registration: registration, lastError: try text(8))
            }
        }
    }

    private func write(_ registration: NextcloudProxyRegistration, _ registered: Registered) async throws {
        let (account, stamp) = (self.account, Int64(now().timeIntervalSince1970))
        try await database.write { db in
            try db.execute(
                """
                UPDATE \(Self.table) SET push_token_hash = ?, proxy_server = ?, registered_key = ?, server_url = ?,
                    user = ?, user_public_key = ?, device_identifier = ?, signature = ?, last_error = NULL,
                    updated_at = ? WHERE account = ?
                """,
                [
                    registered.pushTokenHash, registered.proxyServer, registered.registeredKey, registered.serverURL,
                    registered.user, registration.userPublicKey, registration.deviceIdentifier,
                    registration.signature, stamp, account,
                ])
        }
    }

    private func fail(_ error: any Error) async -> NextcloudProxyDeviceStatus {
        let reason = (error as? any TidingsError)?.description ?? "\(type(of: error))"
        let (account, stamp) = (self.account, Int64(now().timeIntervalSince1970))
        // Best effort: the status carries the reason even when the store cannot keep it.
        _ = try? await database.write { db in
            try db.execute(
                "UPDATE \(Self.table) SET last_error = ?, updated_at = ? WHERE account = ?", [reason, stamp, account])
        }
        return .failed(reason: reason)
    }
}

extension NextcloudProxyDevice: PushRegistrationWithdrawing {
    /// `nextcloud-proxy`.
    public nonisolated var registrationName: String { "nextcloud-proxy" }

    /// ``signOut()``: at the server and the proxy, then the row and key.
    ///
    /// - Throws: ``PushRegistrationWithdrawalError`` when the server or proxy could not be told (the row is
    ///   deleted all the same), `StoreError` when the row could not be deleted.
    public func withdrawRegistration() async throws {
        if case .failed(let reason) = try await signOut() {
            throw PushRegistrationWithdrawalError.serverNotTold(registrationName, reason: reason)
        }
    }
}
