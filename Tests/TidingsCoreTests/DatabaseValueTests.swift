import Foundation
import Testing

@testable import TidingsCore

@Suite(.timeLimit(.minutes(1))) struct DatabaseValueTests {
    private func makeDatabase() throws -> SQLiteDatabase {
        let schema = SQLiteSchema(
            tables: [.disposable("t")],
            migrations: [
                .init(version: 1, name: "t") { db in
                    try db.execute("CREATE TABLE t(a, b, c, d, e, f, g, h)")
                }
            ])
        return try SQLiteDatabase.inMemory(schema: schema)
    }

    @Test func everyConvertibleTypeRoundTrips() throws {
        let database = try makeDatabase()
        let bytes: [UInt8] = [0, 1, 2, 255]
        try database.write { db in
            try db.execute(
                "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [Int.max, Int64.min, 2.5, true, "héllo\u{0}x", bytes, Data([9, 8]), String?.none])
        }
        try database.read { db in
            let found = try db.fetchOne("SELECT * FROM t") { row throws -> Bool in
                #expect(try row[0] as Int == Int.max)
                #expect(try row[1] as Int64 == Int64.min)
                #expect(try row[2] as Double == 2.5)
                #expect(try row[3] as Bool == true)
                #expect(try row[4] as String == "héllo\u{0}x")
                #expect(try row[5] as [UInt8] == bytes)
                #expect(try row[6] as Data == Data([9, 8]))
                #expect(try row[7] as String? == nil)
                #expect(try row[7] as SQLiteValue == .null)
                #expect(try row["e"] as String == "héllo\u{0}x")
                #expect(row.columnName(2) == "c")
                return true
            }
            #expect(found == true)
        }
    }

    @Test func valuesBindLikeArguments() throws {
        let database = try makeDatabase()
        try database.write { db in
            try db.execute("INSERT INTO t(a, b, c, d) VALUES (?, ?, ?, ?)", values: 7, "seven", Int?.none, [UInt8]([7]))
            #expect(throws: StoreError.misuse) { try db.execute("INSERT INTO t(a, b) VALUES (?, ?)", values: 1) }
            #expect(throws: StoreError.misuse) { try db.execute("INSERT INTO t(a) VALUES (?)", values: 1, 2) }
        }
        let row = try database.read { db in
            try db.fetchOne("SELECT a, b, c, d FROM t") { row in
                "\(try row[0] as Int) \(try row[1] as String) \(String(describing: try row[2] as Int?)) \(try row[3] as [UInt8])"
            }
        }
        #expect(row == "7 seven nil [7]")
    }

    @Test func emptyTextAndBlobAreNotNull() throws {
        let database = try makeDatabase()
        try database.write { try $0.execute("INSERT INTO t(a, b) VALUES (?, ?)", ["", [UInt8]()]) }
        let types = try database.read {
            try $0.fetchOne("SELECT typeof(a), typeof(b) FROM t") { "\(try $0[0] as String) \(try $0[1] as String)" }
        }
        #expect(types == "text blob")
    }

    @Test func readingTheWrongTypeThrowsInsteadOfTrapping() throws {
        let database = try makeDatabase()
        try database.write { try $0.execute("INSERT INTO t(a, b, c) VALUES (NULL, 'text', 4294967296)") }
        try database.read { db in
            try db.forEachRow("SELECT a, b, c FROM t") { row throws in
                #expect(throws: StoreError.typeMismatch) { try row[0] as Int }
                #expect(throws: StoreError.typeMismatch) { try row[1] as Int64 }
                #expect(throws: StoreError.typeMismatch) { try row[0] as [UInt8] }
                #expect(throws: StoreError.typeMismatch) { try row[2] as Int32 }
                #expect(throws: StoreError.misuse) { try row[3] as Int }
                #expect(throws: StoreError.misuse) { try row["nope"] as Int }
                #expect(try row[0] as Int? == nil)
                #expect(try row[2] as Double == 4294967296)
            }
        }
    }

    @Test func wrongArgumentCountIsAMisuseNamingTheSQL() throws {
        let database = try makeDatabase()
        let error = #expect(throws: StoreError.self) {
            try database.write { try $0.execute("INSERT INTO t(a, b) VALUES (?, ?)", [1]) }
        }
        #expect(error == .misuse)
        #expect(error?.sql == "INSERT INTO t(a, b) VALUES (?, ?)")
        #expect(throws: StoreError.misuse) {
            try database.write { try $0.execute("INSERT INTO t(a) VALUES (1); INSERT INTO t(a) VALUES (2)") }
        }
    }

    @Test func errorsNeverCarryBoundValues() throws {
        let database = try makeDatabase()
        try database.write { try $0.execute("CREATE UNIQUE INDEX ta ON t(a)") }
        try database.write { try $0.execute("INSERT INTO t(a) VALUES (?)", ["secret-token-123"]) }
        let error = #expect(throws: StoreError.self) {
            try database.write { try $0.execute("INSERT INTO t(a) VALUES (?)", ["secret-token-123"]) }
        }
        #expect(error == .constraint)
        #expect(error.map { !"\($0)".contains("secret-token-123") } == true)
    }
}
