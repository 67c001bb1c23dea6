import Foundation
import PeerSupport
import Testing
import TidingsCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Kills a writer process with SIGKILL at random moments and checks that every commit it reported survived.
@Suite(.timeLimit(.minutes(5))) struct StoreCrashTests {
    static var writer: URL { StoreChild.executable }

    /// Starts the writer, reads `linesBeforeKill` ids, kills it, and returns every complete id line it printed.
    ///
    /// The writer is spawned and reaped off Swift's cooperative pool and its output is read on a thread of
    /// its own (PeerSupport's ``ChildProcess``): nothing here blocks a pool thread.
    private func runAndKill(path: String, keyHex: String, linesBeforeKill: Int, extraMicroseconds: Int) async throws
        -> [Int64]
    {
        let errorLog = URL(fileURLWithPath: path).deletingLastPathComponent()
            .appendingPathComponent("writer-\(UUID().uuidString).err").path
        defer { try? FileManager.default.removeItem(atPath: errorLog) }
        let writer = try ChildProcess.spawn(
            executable: Self.writer.path, arguments: [path, keyHex], standardOutput: .pipe,
            standardError: .file(errorLog))
        let wanted = linesBeforeKill
        var before = (data: Data(), complete: true)
        if wanted > 0 {
            before = try await writer.readOutput(timeout: .seconds(60)) { output in
                output.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) } >= wanted
            }
            #expect(before.complete, "the writer stopped after \(before.data.count) bytes")
        }
        // Some extra random delay so the kill lands anywhere in the next transaction.
        if extraMicroseconds > 0 { try await Task.sleep(for: .microseconds(extraMicroseconds)) }
        writer.signal(SIGKILL)
        let rest = try await writer.readOutput(timeout: .seconds(60)) { _ in false }
        let termination = await writer.waitForExit()
        let errorText = (try? String(contentsOfFile: errorLog, encoding: .utf8)) ?? ""
        #expect(termination == .signalled(SIGKILL), "writer exited on its own: \(errorText)")
        let text = String(decoding: before.data + rest.data, as: UTF8.self)
        // A line without its newline was cut by the kill: its id is not counted as reported.
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast()
        return try lines.map { line in try #require(Int64(line), "bad line '\(line)'") }
    }

    @Test func everyCommittedRowSurvivesSIGKILL() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.writer.path), "StoreCrashWriter is not built")
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("outbox.sqlite")
        let key = TidingsCrypto.SymmetricKey.random()
        let keyHex = key.bytes.map { String(format: "%02x", $0) }.joined()
        let cipher = try ValueCipher(key: key)
        var reported: Set<Int64> = []
        var generator = SystemRandomNumberGenerator()
        let kills = 110
        for round in 0..<kills {
            // Round 0 kills during the first open; the others after 0–20 commits and up to 2 ms more.
            let lines = round == 0 ? 0 : Int.random(in: 0...20, using: &generator)
            let delay = Int.random(in: 0...2000, using: &generator)
            let printed = try await runAndKill(
                path: path, keyHex: keyHex, linesBeforeKill: lines, extraMicroseconds: delay)
            reported.formUnion(printed)

            let database = try SQLiteDatabase(
                path: path, schema: StoreCrashOutbox.schema, configuration: .init(cipher: cipher))
            #expect(database.openReport.recovery == nil, "round \(round): \(String(describing: database.openReport))")
            // Checked on the store's queue, where no test context is: problems come back as values.
            let (present, halfWritten) = try await database.read { db in
                var present: Set<Int64> = []
                var halfWritten: [Int64] = []
                try db.forEachRow("SELECT id, payload, checksum FROM outbox") { row in
                    let id: Int64 = try row[0]
                    let plaintext = try cipher.open(try row[1], table: "outbox", column: "payload", rowID: id)
                    let stored: Int64 = try row[2]
                    if plaintext.count != 512 || StoreCrashOutbox.checksum(plaintext) != stored {
                        halfWritten.append(id)
                    }
                    present.insert(id)
                }
                return (present, halfWritten)
            }
            #expect(halfWritten.isEmpty, "round \(round): half-written rows \(halfWritten.prefix(10))")
            let missing = reported.subtracting(present)
            #expect(missing.isEmpty, "round \(round): committed rows lost: \(missing.sorted().prefix(10))")
            if !missing.isEmpty { break }
        }
        #expect(reported.count > kills, "the writer committed too little to test anything")
        #expect(try directory.files().allSatisfy { !$0.contains("corrupt") })
    }
}
