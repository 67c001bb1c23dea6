import Foundation
import PeerSupport
import Testing

@testable import TidingsCore

/// Two processes on one store file (the app and its notification extension, or the CLI): real child processes
/// (Tests/StoreCrashWriter), spawned and reaped off the test thread pool.
@Suite(.timeLimit(.minutes(1))) struct StoreTwoProcessTests {
    /// The child's schema (Tests/StoreCrashWriter/main.swift declares the same): `TestSchema` plus markers.
    static let schema = SQLiteSchema(
        tables: TestSchema.tables + [SQLiteMarkerStorage.table],
        migrations: [
            .init(version: 1, name: "create") { db in
                try TestSchema.version1.body(db)
                try SQLiteMarkerStorage.createTable(db)
            }
        ])

    private func child(
        _ arguments: [String], _ directory: StoreTemporaryDirectory, standardInput: ChildProcess.Stream = .nullDevice
    ) throws -> StoreChild {
        #expect(FileManager.default.isExecutableFile(atPath: StoreChild.executable.path), "child is not built")
        return try StoreChild(arguments, directory: directory.url, standardInput: standardInput)
    }

    @Test func twoProcessesMigratingAtOnceBothOpenTheMigratedFile() async throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")

        // The first holds its migration transaction open until its standard input ends; the second reads
        // user_version 0 meanwhile and only then is the first let go, so the second takes the write lock
        // behind which the file is already migrated.
        let first = try child(["migrate", path, "hold"], directory, standardInput: .pipe)
        try await first.waitForOutput("inside")
        let second = try child(["migrate", path], directory)
        try await second.waitForOutput("log found version 0 of 1; waiting for the write lock")
        first.process.closeStandardInput()

        let firstStatus = try await first.exitStatus()
        let secondStatus = try await second.exitStatus()
        #expect(firstStatus == 0, "\(first.output) \(first.errors)")
        #expect(secondStatus == 0, "\(second.output) \(second.errors)")
        #expect(first.output.contains("ok from=0 recovery=none"), "\(first.output)")
        // The second found version 1 once it held the write lock, so it ran no step of its own.
        #expect(second.output.contains("ok from=1 recovery=none"), "\(second.output)")
        #expect(!second.output.contains("migrationFailed"), "\(second.output)")
        let reread = "log another connection migrated the store from 0 to 1 meanwhile"
        #expect(second.output.contains(reread), "\(second.output)")
        #expect(try directory.files().allSatisfy { !$0.contains("corrupt") }, "\((try? directory.files()) ?? [])")

        let database = try SQLiteDatabase(path: path, schema: Self.schema)
        #expect(database.openReport.recovery == nil)
        #expect(try await database.read { try $0.userVersion() } == 1)
    }

    @Test func aDamagedFileOpenInAnotherProcessIsLeftAloneWithABusyError() async throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        do {
            let database = try SQLiteDatabase(path: path, schema: Self.schema)
            try await database.write { db in
                for index in 0..<3000 {
                    try db.execute("INSERT INTO outbox(id, payload, created_at) VALUES (?, ?, 0)", [index, [UInt8(1)]])
                    try db.execute("INSERT INTO messages(id, body) VALUES (?, 'x')", ["m\(index)"])
                }
            }
            // Closed now, not whenever the store's queue lets go of it: a late close would checkpoint the WAL
            // over the damage written next.
            database.close()
        }
        #expect(try TestSchema.damageMessagesIndex(path, schema: Self.schema) > 1)
        let holder = try SQLiteDatabase(
            path: path, schema: Self.schema, configuration: .init(checksIntegrityOnOpen: false))

        let opener = try child(["open", path], directory)
        let status = try await opener.exitStatus()
        #expect(status == 1)
        #expect(opener.output.contains("error StoreError.busy"), "\(opener.output) \(opener.errors)")
        #expect(try directory.files().allSatisfy { !$0.contains("corrupt") }, "\((try? directory.files()) ?? [])")
        #expect(try await holder.read { try $0.fetchOne(Int.self, "SELECT count(*) FROM outbox") } == 3000)

        // Once nobody has it open, the damaged file is replaced as usual.
        holder.close()
        let again = try child(["open", path], directory)
        #expect(try await again.exitStatus() == 0, "\(again.output) \(again.errors)")
        #expect(again.output.contains("recovery=corrupt"), "\(again.output)")
    }

    @Test func aMarkerAdvancedByAnotherProcessTakesTheStoredMaximum() async throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        let storage = SQLiteMarkerStorage(database: try SQLiteDatabase(path: path, schema: Self.schema))
        let marker = try MonotonicMarker(key: "home.read", storage: storage)
        #expect(try marker.advance(to: "100"))

        let other = try child(["advance-marker", path, "home.read", "500"], directory)
        #expect(try await other.exitStatus() == 0, "\(other.errors)")
        #expect(other.output == "moved\n")

        // 200 is ahead of what this process knew, behind what the other stored.
        #expect(try marker.advance(to: "200") == false)
        #expect(marker.value == "500")
        #expect(try marker.advanceReporting(to: "300") == .refused)
        #expect(try marker.advanceReporting(to: "501") == .moved)

        // A process that loads the marker after another moved it knows the stored value: it refuses.
        let behind = try child(["advance-marker", path, "home.read", "400"], directory)
        #expect(try await behind.exitStatus() == 0)
        #expect(behind.output == "refused\n")
        #expect(try await storage.loadMarker(key: "home.read") == "501")
    }
}
