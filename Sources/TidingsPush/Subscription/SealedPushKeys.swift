import TidingsCore

/// Web Push subscription keys as one row of a push-store table keeps them: the private key and the auth secret
/// sealed with the app's `ValueCipher`, each bound to its table, column and account (a value copied to another
/// row or column does not open), the public key in the clear.
struct SealedPushKeys: Sendable {
    let privateKey: SealedValue
    let auth: SealedValue
    let publicKey: String

    /// Seals `keys` for `account`'s row of `table`.
    ///
    /// - Throws: `StoreError` when sealing fails.
    init(sealing keys: WebPushSubscriptionKeys, table: String, account: String, cipher: ValueCipher) throws {
        privateKey = try cipher.seal(
            keys.privateKey.rawRepresentation, table: table, column: "private_key", rowID: account)
        auth = try cipher.seal(keys.authSecret, table: table, column: "auth", rowID: account)
        publicKey = keys.base64URLPublicKey
    }

    /// The keys of `account`'s row of `table` (columns `private_key` and `auth`), opened; nil when it has no row.
    ///
    /// - Throws: `StoreError` when the store fails or a sealed value does not open (another key, a tampered or
    ///   moved value); ``WebPushError`` when the opened bytes are not keys.
    static func open(_ db: SQLiteConnection, table: String, account: String, cipher: ValueCipher) throws
        -> WebPushSubscriptionKeys?
    {
        let row = try db.fetchOne("SELECT private_key, auth FROM \(table) WHERE account = ?", [account]) { row in
            (try SealedValue(databaseColumn: row.column(0)), try SealedValue(databaseColumn: row.column(1)))
        }
        guard let (sealedKey, sealedAuth) = row else { return nil }
        let privateKey = try cipher.open(sealedKey, table: table, column: "private_key", rowID: account)
        let auth = try cipher.open(sealedAuth, table: table, column: "auth", rowID: account)
        return try WebPushSubscriptionKeys(privateKey: privateKey, authSecret: auth)
    }
}
