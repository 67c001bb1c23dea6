import Foundation
import Testing
import TidingsCore

/// `tidings kecalek show` only reads: a damaged, foreign or wrongly keyed file is reported and left as it is.
@Suite(.timeLimit(.minutes(1))) struct KecalekShowCommandTests {
    /// Runs `show` on `store` and checks that neither the file's bytes nor the directory changed.
    private func showLeavesEverythingAlone(_ store: String, _ extra: [String] = []) async throws -> ToolRun {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: store))
        let listing = try KecalekCLI.listing(beside: store)
        let run = try await ToolRun.run(["kecalek", "show", "--store", store] + extra)
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == bytes, "show changed the file")
        #expect(try KecalekCLI.listing(beside: store) == listing, "show created, moved or removed a file")
        #expect(run.standardOutput.isEmpty || run.status == 0)
        return run
    }

    @Test func aFileThatIsNotADatabaseIsReportedWith65AndLeftAlone() async throws {
        let store = try KecalekCLI.temporaryStore()
        try Data(repeating: 0xA5, count: 8192).write(to: URL(fileURLWithPath: store))
        let run = try await showLeavesEverythingAlone(store)
        #expect(run.status == 65)
        #expect(
            KecalekCLI.errorLines(run) == [
                "Error: \(store) is not an SQLite database (file is not a database); left as it is."
            ])
    }

    @Test func anotherProgramsDatabaseIsReportedWith65AndLeftAloneByShowAndSync() async throws {
        let store = try KecalekCLI.temporaryStore()
        do {
            let other = try SQLiteDatabase(
                path: store,
                schema: SQLiteSchema(
                    tables: [.durable("contacts")],
                    migrations: [
                        .init(version: 1, name: "contacts") { db in
                            try db.execute("CREATE TABLE contacts(name TEXT)")
                        }
                    ]))
            other.close()
        }
        let run = try await showLeavesEverythingAlone(store)
        #expect(run.status == 65)
        #expect(run.standardError.contains("is not a Kecalek cache (table contacts is not declared"))
        // sync refuses it too, before writing anything into it.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: store))
        let sync = try await ToolRun.run(["kecalek", "sync", "--store", store, "--conversation", "random"])
        #expect(sync.status == 65)
        #expect(sync.standardError.contains("is not a Kecalek cache (table contacts is not declared"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == bytes, "sync changed another program's file")
    }

    @Test func aCacheWrittenWithAnotherKeyExits77AndAMissingOneExits66() async throws {
        let store = try KecalekCLI.temporaryStore()
        let sync = try await ToolRun.run(["kecalek", "sync", "--store", store, "--conversation", "random"])
        #expect(sync.status == 0, "\(sync.standardError)")
        let run = try await showLeavesEverythingAlone(store, ["--key", KecalekCLI.cacheKey])
        #expect(run.status == 77)
        #expect(
            KecalekCLI.errorLines(run) == ["Error: \(store) was written with another key; left as it is (check --key)."]
        )
        let missing = try await ToolRun.run(["kecalek", "show", "--store", store + ".nope"])
        #expect(missing.status == 66)
        #expect(!FileManager.default.fileExists(atPath: store + ".nope"))
    }

    @Test func aReadableCacheIsShownWithoutCreatingAnyFile() async throws {
        let store = try KecalekCLI.temporaryStore()
        let sync = try await ToolRun.run(["kecalek", "sync", "--store", store, "--conversation", "random"])
        #expect(sync.status == 0, "\(sync.standardError)")
        // Only the database itself: no lock, WAL or shared-memory file for show to reuse.
        for companion in [".lock", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store + companion) }
        let run = try await showLeavesEverythingAlone(store)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.contains("random: 30 cached"))
        #expect(try KecalekCLI.listing(beside: store) == ["cache.sqlite"])
    }
}
