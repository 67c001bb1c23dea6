import Testing
import TidingsCore

/// The busy timeout reaches SQLite in milliseconds, clamped to what SQLite accepts.
@Suite(.timeLimit(.minutes(1))) struct DatabaseBusyTimeoutTests {
    private func busyTimeout(_ timeout: Duration) throws -> Int? {
        let database = try SQLiteDatabase.inMemory(
            schema: TestSchema.schema, configuration: .init(busyTimeout: timeout))
        return try database.read { try $0.fetchOne(Int.self, "PRAGMA busy_timeout") }
    }

    @Test func millisecondsArePassedThrough() throws {
        #expect(try busyTimeout(.milliseconds(1250)) == 1250)
    }

    @Test func hugeAndNegativeTimeoutsAreClampedNotTrapped() throws {
        #expect(try busyTimeout(.seconds(Int64.max)) == Int(Int32.max))
        #expect(try busyTimeout(.seconds(Int64.min)) == 0)
        #expect(try busyTimeout(.seconds(-1)) == 0)
    }
}
