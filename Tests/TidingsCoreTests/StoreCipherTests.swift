import Foundation
import Testing

@testable import TidingsCore

@Suite(.timeLimit(.minutes(1))) struct StoreCipherTests {
    private let key = TidingsCrypto.SymmetricKey.random()

    private func open(_ path: String, key: TidingsCrypto.SymmetricKey) throws -> SQLiteDatabase {
        try SQLiteDatabase(
            path: path, schema: TestSchema.schema, configuration: .init(cipher: try ValueCipher(key: key)))
    }

    private func insert(_ database: SQLiteDatabase, id: Int64, text: String) throws {
        let cipher = try #require(database.cipher)
        try database.write { db in
            let sealed = try cipher.seal(text, table: "outbox", column: "payload", rowID: id)
            try db.execute("INSERT INTO outbox(id, payload, created_at) VALUES (?, ?, 0)", [id, sealed])
        }
    }

    private func read(_ database: SQLiteDatabase, id: Int64) throws -> String {
        let cipher = try #require(database.cipher)
        let sealed = try database.read {
            try $0.fetchOne(SealedValue.self, "SELECT payload FROM outbox WHERE id = ?", [id])
        }
        return try cipher.openString(try #require(sealed), table: "outbox", column: "payload", rowID: id)
    }

    @Test func sealedValuesRoundTripAndNeverStorePlaintext() throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        do {
            let database = try open(path, key: key)
            try insert(database, id: 1, text: "meet at the harbour at nine")
            #expect(try read(database, id: 1) == "meet at the harbour at nine")
        }
        let file = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(file.range(of: Data("harbour".utf8)) == nil)
        #expect(try read(try open(path, key: key), id: 1) == "meet at the harbour at nine")
    }

    @Test func sealingTheSameTextTwiceGivesDifferentBytes() throws {
        let cipher = try ValueCipher(key: key)
        let first = try cipher.seal("same", table: "t", column: "c", rowID: 1)
        let second = try cipher.seal("same", table: "t", column: "c", rowID: 1)
        #expect(first != second)
        #expect(first.bytes.count == 4 + SealedValue.overhead)
    }

    @Test func aWrongKeyFailsAtOpenAndLeavesTheFileAlone() throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        try insert(try open(path, key: key), id: 7, text: "secret")
        let error = #expect(throws: StoreError.self) { try open(path, key: TidingsCrypto.SymmetricKey.random()) }
        #expect(error == .wrongKey)
        #expect(try directory.files() == ["store.sqlite", "store.sqlite.lock"])
        #expect(try read(try open(path, key: key), id: 7) == "secret")
    }

    @Test func aWrongKeyIsCheckedBeforeTheSchemaVersion() throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        try insert(try open(path, key: key), id: 7, text: "secret")
        try SQLiteDatabase(path: path, schema: TestSchema.schema).writeWithoutTransaction {
            try $0.execute("PRAGMA user_version = 9")
        }
        // A wrong key must not move a too-new store aside: the user may just have typed the wrong passphrase.
        #expect(throws: StoreError.wrongKey) { try open(path, key: TidingsCrypto.SymmetricKey.random()) }
        #expect(try directory.files() == ["store.sqlite", "store.sqlite.lock"])
    }

    @Test func aWrongKeyOnADamagedStoreLeavesItAloneAndTheRightKeyRecoversIt() throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        do {
            let database = try open(path, key: key)
            for id in 1...500 { try insert(database, id: Int64(id), text: "draft \(id)") }
            try database.write { db in
                for id in 1...500 { try db.execute("INSERT INTO messages(id) VALUES (?)", ["m\(id)"]) }
            }
        }
        // Damage the messages index page, leaving the outbox and the key check readable.
        #expect(try TestSchema.damageMessagesIndex(path, fill: 0x5A) > 1)

        #expect(throws: StoreError.wrongKey) { try open(path, key: TidingsCrypto.SymmetricKey.random()) }
        #expect(try directory.files() == ["store.sqlite", "store.sqlite.lock"])

        let database = try open(path, key: key)
        #expect(database.openReport.recovery?.keptAllDurableData == true)
        #expect(try read(database, id: 500) == "draft 500")
    }

    @Test func aTamperedCiphertextFailsAuthentication() throws {
        let database = try open(":memory:", key: key)
        try insert(database, id: 1, text: "pay 10 coins")
        // Flip one bit in the middle of the ciphertext.
        try database.write { db in
            let stored = try #require(try db.fetchOne([UInt8].self, "SELECT payload FROM outbox WHERE id = 1"))
            var changed = stored
            changed[stored.count / 2] ^= 0x01
            try db.execute("UPDATE outbox SET payload = ? WHERE id = 1", [changed])
        }
        #expect(throws: StoreError.tampered) { try read(database, id: 1) }
    }

    @Test func aTruncatedOrForeignBlobIsTampered() throws {
        let cipher = try ValueCipher(key: key)
        let sealed = try cipher.seal("x", table: "t", column: "c", rowID: 1)
        let candidates: [[UInt8]] = [[], [1], Array(sealed.bytes.dropLast()), [9] + sealed.bytes.dropFirst()]
        for bytes in candidates {
            #expect(throws: StoreError.tampered) {
                try cipher.open(SealedValue(bytes: bytes), table: "t", column: "c", rowID: 1)
            }
        }
    }

    @Test func aBlobMovedToAnotherRowColumnOrTableFails() throws {
        let database = try open(":memory:", key: key)
        try insert(database, id: 1, text: "to alice")
        try insert(database, id: 2, text: "to bob")
        try database.write { db in
            try db.execute("UPDATE outbox SET payload = (SELECT payload FROM outbox WHERE id = 1) WHERE id = 2")
        }
        #expect(try read(database, id: 1) == "to alice")
        #expect(throws: StoreError.wrongRow) { try read(database, id: 2) }

        let cipher = try ValueCipher(key: key)
        let sealed = try cipher.seal("v", table: "outbox", column: "payload", rowID: 1)
        #expect(throws: StoreError.wrongRow) { try cipher.open(sealed, table: "drafts", column: "payload", rowID: 1) }
        #expect(throws: StoreError.wrongRow) { try cipher.open(sealed, table: "outbox", column: "title", rowID: 1) }
        // The integer 1 and the text "1" are different row keys.
        #expect(throws: StoreError.wrongRow) { try cipher.open(sealed, table: "outbox", column: "payload", rowID: "1") }
    }

    @Test func aMovedBlobWithAForgedRowTagStillFails() throws {
        let cipher = try ValueCipher(key: key)
        let sealed = try cipher.seal("v", table: "outbox", column: "payload", rowID: 1)
        let target = try cipher.seal("w", table: "outbox", column: "payload", rowID: 2)
        // Copy the target row's 8-byte tag over: authentication, not the tag, is what binds the value.
        let forged = SealedValue(bytes: [sealed.bytes[0]] + target.bytes[1..<9] + sealed.bytes[9...])
        #expect(throws: StoreError.tampered) { try cipher.open(forged, table: "outbox", column: "payload", rowID: 2) }
    }

    @Test func sealedValuesSalvagedFromATooNewStoreStillOpen() throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        try insert(try open(path, key: key), id: 3, text: "unsent reply")
        try SQLiteDatabase(path: path, schema: TestSchema.schema).writeWithoutTransaction {
            try $0.execute("PRAGMA user_version = 5")
        }
        let database = try open(path, key: key)
        #expect(database.openReport.recovery?.reason == .schemaTooNew(found: 5, known: 1))
        #expect(database.openReport.recovery?.keptAllDurableData == true)
        #expect(try read(database, id: 3) == "unsent reply")
    }

    @Test func onlyAES256KeysAreAccepted() throws {
        #expect(throws: StoreError.misuse) { try ValueCipher(key: TidingsCrypto.SymmetricKey.random(bitCount: 128)) }
    }
}
