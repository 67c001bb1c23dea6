import Foundation
import PeerSupport
import Testing

@testable import TidingsCore

/// A suspended store beside a second process (the app's notification extension): real child processes
/// (Tests/StoreCrashWriter), spawned and reaped off the test thread pool.
@Suite(.timeLimit(.minutes(2))) struct StoreSuspensionTwoProcessTests {
    private static let insert = "INSERT INTO outbox(id, payload, created_at) VALUES (?, ?, 0)"

    private func child(_ arguments: [String], _ directory: StoreTemporaryDirectory) throws -> StoreChild {
        #expect(FileManager.default.isExecutableFile(atPath: StoreChild.executable.path), "child is not built")
        return try StoreChild(arguments, directory: directory.url)
    }

    /// What `StoreCrashWriter probe-locks` sees of this process's locks on the store.
    private func probe(_ path: String, _ directory: StoreTemporaryDirectory) async throws -> [String] {
        let prober = try child(["probe-locks", path], directory)
        #expect(try await prober.exitStatus() == 0, "\(prober.errors)")
        return prober.output.split(separator: "\n").map(String.init)
    }

    @Test func aSuspendedStoreLetsAnotherProcessTakeItsLockAndWrite() async throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        let database = try SQLiteDatabase(path: path, schema: StoreTwoProcessTests.schema)
        try await database.write { try $0.execute(Self.insert, [1, [UInt8(1)]]) }

        // Open, the store holds its `.lock`, and its idle WAL connection a record lock on the -shm: both are
        // what iOS counts against a suspended process.
        let open = try await probe(path, directory)
        #expect(open.first == "lock held", "\(open)")
        #expect(open.contains { $0.hasPrefix("shm held by") }, "\(open)")

        try await database.suspend()
        // As in `storeLockBecomesFree`: a process another test spawned may share the `.lock`'s open file
        // description until its `exec`, so a held lock is asked about again a few times.
        var suspended = try await probe(path, directory)
        for _ in 0..<20 where suspended.first == "lock held" {
            try await Task.sleep(for: .milliseconds(100))
            suspended = try await probe(path, directory)
        }
        #expect(suspended.first == "lock free", "\(suspended)")
        #expect(suspended.contains("db free"), "\(suspended)")
        #expect(suspended.contains("shm free") || suspended.contains("shm absent"), "\(suspended)")

        let writer = try child(["write-rows", path, "1000", "3"], directory)
        #expect(try await writer.exitStatus() == 0, "\(writer.output) \(writer.errors)")
        #expect(writer.output.hasSuffix("done\n"), "\(writer.output)")

        try await database.resume()
        let ids = try await database.read { try $0.fetchAll(Int.self, "SELECT id FROM outbox ORDER BY id") }
        #expect(ids == [1, 1000, 1001, 1002])
        #expect(try await probe(path, directory).first == "lock held")
    }

    @Test func nothingIsLostAcrossSuspensionsBesideAnotherProcessWriting() async throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        let database = try SQLiteDatabase(
            path: path, schema: StoreTwoProcessTests.schema,
            configuration: .init(busyTimeout: .seconds(30), whenSuspended: .wait))
        let childRows = 400
        let writer = try child(["write-rows", path, "100000", "\(childRows)"], directory)
        try await writer.waitForOutput("wrote 100000")

        // Its own writes, and one asked for while suspended each round, while the child goes on committing.
        var rounds = 0
        var ownIDs: [Int] = []
        while rounds < 20 || !writer.output.contains("done") {
            rounds += 1
            guard rounds <= 500 else { break }
            let own = rounds
            try await database.write { try $0.execute(Self.insert, [own, [UInt8(1)]]) }
            ownIDs.append(own)
            try await database.suspend()
            let id = 10_000 + rounds
            let waiting = Task { try await database.write { try $0.execute(Self.insert, [id, [UInt8(1)]]) } }
            await Task.yield()
            try await database.resume()
            try await waiting.value
            ownIDs.append(id)
        }
        #expect(try await writer.exitStatus() == 0, "\(writer.errors)")
        #expect(writer.output.contains("done"), "\(writer.output.suffix(200))")

        let ids = Set(try await database.read { try $0.fetchAll(Int.self, "SELECT id FROM outbox") })
        let expected = Set(ownIDs).union(100_000..<100_000 + childRows)
        #expect(ids == expected, "missing \(expected.subtracting(ids).sorted().prefix(20))")
        #expect(rounds >= 20)
    }
}
