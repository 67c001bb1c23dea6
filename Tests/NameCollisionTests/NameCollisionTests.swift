import Foundation
import NameCollisionStandIns
import Testing
import TidingsCore
import TidingsKecalek
import TidingsMastodon
import TidingsNet
import TidingsSandbox
import TidingsSandboxKit
import TidingsYpChat

#if canImport(CryptoKit)
    import CryptoKit
#endif
#if canImport(os)
    import os
#endif

/// Compile-time proof that an app importing Tidings beside CryptoKit, `os` and GRDB can use their common names
/// unqualified: each use below would be ambiguous, and this file would not compile, if a Tidings library
/// exported the same name.
@Suite(.timeLimit(.minutes(1)))
struct NameCollisionTests {
    // Names are used in type position on purpose: there an ambiguous name is a compile error, while in an
    // expression the type checker would quietly pick whichever declaration type-checks.
    @Test func grdbNamesResolveToGRDB() {
        let database: Database.Type = Database.self
        let queue: DatabaseQueue.Type = DatabaseQueue.self
        let pool: DatabasePool.Type = DatabasePool.self
        let row: Row.Type = Row.self
        let statement: Statement.Type = Statement.self
        let value: DatabaseValue.Type = DatabaseValue.self
        let arguments: StatementArguments.Type = StatementArguments.self
        let column: Column.Type = Column.self
        let migrator: DatabaseMigrator.Type = DatabaseMigrator.self
        let error: DatabaseError.Type = DatabaseError.self
        let configuration: Configuration.Type = Configuration.self
        let record: Record.Type = Record.self
        let convertible: [any DatabaseValueConvertible] = []
        let origins = [
            database.origin, queue.origin, pool.origin, row.origin, statement.origin, value.origin,
            arguments.origin, column.origin, migrator.origin, error.origin, configuration.origin, record.origin,
        ]
        #expect(Set(origins) == ["NameCollisionStandIns"])
        #expect(convertible.isEmpty)
    }

    @Test func cryptoKitNamesResolveToCryptoKit() {
        #if canImport(CryptoKit)
            let key: SymmetricKey = SymmetricKey(size: .bits256)
            #expect(key.bitCount == 256)
            #expect(Array(SHA256.hash(data: Data("abc".utf8))).count == 32)
            #expect(Array(SHA512.hash(data: Data())).count == 64)
            #expect(Array(Insecure.SHA1.hash(data: Data())).count == 20)
            let agreement: P256.KeyAgreement.PrivateKey = P256.KeyAgreement.PrivateKey()
            #expect(agreement.publicKey.rawRepresentation.count == 64)
            let hmac: HMAC<SHA256>.Type = HMAC<SHA256>.self
            let hkdf: HKDF<SHA256>.Type = HKDF<SHA256>.self
            let gcm: AES.GCM.Type = AES.GCM.self
            _ = (hmac, hkdf, gcm)
        #else
            let key: SymmetricKey.Type = SymmetricKey.self
            let sha256: SHA256.Type = SHA256.self
            let sha384: SHA384.Type = SHA384.self
            let sha512: SHA512.Type = SHA512.self
            let p256: P256.Type = P256.self
            let p384: P384.Type = P384.self
            let hkdf: HKDF.Type = HKDF.self
            let hmac: HMAC.Type = HMAC.self
            let insecure: Insecure.Type = Insecure.self
            let aes: AES.Type = AES.self
            let chaCha: ChaChaPoly.Type = ChaChaPoly.self
            let curve: Curve25519.Type = Curve25519.self
            let origins = [
                key.origin, sha256.origin, sha384.origin, sha512.origin, p256.origin, p384.origin, hkdf.origin,
                hmac.origin, insecure.origin, aes.origin, chaCha.origin, curve.origin,
            ]
            #expect(Set(origins) == ["NameCollisionStandIns"])
        #endif
    }

    @Test func osLoggerResolvesToOS() {
        #if canImport(os)
            let logger: Logger = Logger(subsystem: "net.tidings.tests", category: "names")
            _ = logger
        #else
            let logger: Logger.Type = Logger.self
            #expect(logger.origin == "NameCollisionStandIns")
        #endif
    }

    @Test func tidingsNamesStayReachable() throws {
        let key = try TidingsCrypto.SymmetricKey(bytes: Array(repeating: 7, count: 32))
        #expect(key.bitCount == 256)
        #expect(TidingsCrypto.SHA256.hash(Array("abc".utf8)).count == 32)
        let database = try SQLiteDatabase.inMemory(schema: SQLiteSchema(tables: [], migrations: []))
        let one = try database.read { try $0.fetchOne(Int.self, "SELECT 1") }
        #expect(one == 1)
        _ = TidingsLogger.self
    }
}
