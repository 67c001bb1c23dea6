import Foundation
import Testing

@testable import TidingsCore

/// A header whose format fields SQLite cannot read ("unsupported file format", a plain SQLITE_ERROR) is damage:
/// the file is moved aside and its durable rows salvaged where possible, never thrown at the app as an SQL
/// error. Found by the random-damage test (seed 15230847489189056693).
@Suite(.timeLimit(.minutes(1))) struct StoreHeaderDamageTests {
    private func damagedStore(_ patch: (inout [UInt8]) -> Void) throws -> (StoreTemporaryDirectory, String) {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        do {
            let database = try SQLiteDatabase(path: path, schema: TestSchema.schema)
            try database.write { try $0.execute("INSERT INTO settings VALUES ('theme', 'dark')") }
            database.close()
        }
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        patch(&bytes)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (directory, path)
    }

    @Test(arguments: [(18, UInt8(7)), (19, UInt8(3)), (19, UInt8(200)), (18, UInt8(0))])
    func unreadableFormatVersionsAreDamage(offset: Int, value: UInt8) throws {
        let (directory, path) = try damagedStore { $0[offset] = value }
        #expect(SQLiteOpener.headerFormatProblem(path) != nil)
        let database = try SQLiteDatabase(path: path, schema: TestSchema.schema)
        let recovery = try #require(database.openReport.recovery)
        #expect(FileManager.default.fileExists(atPath: recovery.movedTo))
        #expect(try directory.files().contains { $0.contains("corrupt") })
    }

    @Test func anUnknownSchemaFormatIsDamage() throws {
        let (directory, path) = try damagedStore { $0[44...47] = [0, 0, 0, 9] }
        #expect(SQLiteOpener.headerFormatProblem(path) == "header schema format 9")
        let database = try SQLiteDatabase(path: path, schema: TestSchema.schema)
        #expect(database.openReport.recovery != nil)
        #expect(try directory.files().contains { $0.contains("corrupt") })
    }

    @Test func aHealthyHeaderHasNoProblem() throws {
        let (directory, path) = try damagedStore { _ in }
        #expect(SQLiteOpener.headerFormatProblem(path) == nil)
        #expect(try SQLiteDatabase(path: path, schema: TestSchema.schema).openReport.recovery == nil)
        #expect(try !directory.files().contains { $0.contains("corrupt") })
    }
}
