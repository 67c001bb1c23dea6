import Foundation
import Testing

@testable import TidingsCore

@Suite(.timeLimit(.minutes(1))) struct DatabaseStatementCacheTests {
    @Test func theSameSQLIsPreparedOnce() throws {
        let database = try SQLiteDatabase.inMemory(schema: TestSchema.schema)
        let counts = try database.write { db in
            let before = db.preparedStatementCount
            for index in 0..<100 {
                try db.execute("INSERT INTO messages(id, body) VALUES (?, ?)", ["m\(index)", "body \(index)"])
            }
            return (before, db.preparedStatementCount)
        }
        #expect(counts.1 - counts.0 == 1)
        // Transactions reuse their BEGIN and COMMIT statements too.
        let afterWrite = try database.write { $0.preparedStatementCount }
        try database.write { try $0.execute("DELETE FROM messages WHERE id = ?", ["m1"]) }
        #expect(try database.write { $0.preparedStatementCount } == afterWrite + 1)
        #expect(try database.read { try $0.fetchOne(Int.self, "SELECT count(*) FROM messages") } == 99)
    }

    @Test func nestedUseOfTheSameSQLGetsItsOwnStatement() throws {
        let database = try SQLiteDatabase.inMemory(schema: TestSchema.schema)
        try database.write { db in
            for index in 0..<3 { try db.execute("INSERT INTO messages(id) VALUES (?)", ["m\(index)"]) }
        }
        let pairs = try database.read { db in
            var pairs: [String] = []
            try db.forEachRow("SELECT id FROM messages ORDER BY id") { outer in
                let left: String = try outer[0]
                try db.forEachRow("SELECT id FROM messages ORDER BY id") { inner in
                    pairs.append(left + (try inner[0] as String))
                }
            }
            return pairs
        }
        #expect(pairs.count == 9)
        #expect(pairs.first == "m0m0")
        #expect(pairs.last == "m2m2")
    }

    @Test func aStatementIsResetAfterAnErrorAndReusable() throws {
        let database = try SQLiteDatabase.inMemory(schema: TestSchema.schema)
        struct Stop: Error {}
        try database.write { try $0.execute("INSERT INTO messages(id) VALUES ('a'), ('b')") }
        #expect(throws: Stop.self) {
            try database.read { db in try db.forEachRow("SELECT id FROM messages") { _ in throw Stop() } }
        }
        let ids = try database.read { try $0.fetchAll(String.self, "SELECT id FROM messages") }
        #expect(ids.sorted() == ["a", "b"])
    }

    @Test func dynamicallyBuiltSQLDoesNotGrowTheCacheWithoutBound() throws {
        let database = try SQLiteDatabase.inMemory(schema: TestSchema.schema)
        let distinct = try database.write { db in
            let before = db.preparedStatementCount
            for index in 0..<700 {
                // Each text is different: the pattern of code that pastes values into SQL.
                try db.execute("INSERT INTO messages(id) VALUES ('m\(index)')")
            }
            let prepared = db.preparedStatementCount - before
            #expect(db.cachedStatementCount <= 512)
            // After a reset of the cache, a repeated text is prepared once more, then cached again.
            try db.execute("DELETE FROM messages WHERE id = ?", ["m1"])
            try db.execute("DELETE FROM messages WHERE id = ?", ["m2"])
            return (prepared, db.preparedStatementCount - before - prepared)
        }
        #expect(distinct.0 == 700)
        #expect(distinct.1 == 1)
        #expect(try database.read { try $0.fetchOne(Int.self, "SELECT count(*) FROM messages") } == 698)
    }
}
