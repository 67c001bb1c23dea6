// The store tests' child process: a second process on the same store file.
//
// Usage:
//   StoreCrashWriter <database path> <64 hex digits of an AES-256 key>
//     Writes outbox-shaped rows, one transaction each, until it is killed. After each commit returns, it
//     prints the row's id on its own line with one unbuffered write, so every id the parent reads belongs to
//     a committed row.
//   StoreCrashWriter migrate <database path> [hold]
//     Opens the store with the two-process schema, printing the store's log lines (`log <message>`). With
//     `hold`, its migration prints `inside` and then reads standard input to its end before committing, so
//     another process can read the old version meanwhile: the parent closes the pipe to let it go. Prints
//     `opening` first, then the outcome line.
//   StoreCrashWriter open <database path>
//     Opens the store with the two-process schema and prints the outcome line.
//   StoreCrashWriter advance-marker <database path> <key> <value>
//     Advances a MonotonicMarker in SQLiteMarkerStorage and prints `moved`, `refused` or `overtaken <v>`.
//   StoreCrashWriter probe-locks <database path>
//     Asks whether another process holds a lock on the store, without opening it: prints `lock free` when
//     `<path>.lock` can be taken exclusively (it is let go at once) or `lock held`, then `db …` and `shm …`:
//     `free`, `held by <pid>` (a POSIX record lock anywhere in the file, as SQLite takes them) or `absent`.
//   StoreCrashWriter write-rows <database path> <first id> <count>
//     Opens the store with the two-process schema and inserts outbox rows first…first+count-1, one
//     transaction each, printing `wrote <id>` after each commit and `done` at the end.
//
// Outcome lines: `ok from=<user_version found> recovery=<none|reason>` or `error <kind>: <message>`.
// Exit codes: 64 for bad arguments, 1 when the store fails.
import Foundation
import PeerSupport
import TidingsCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("StoreCrashWriter: \(message)\n".utf8))
    exit(status)
}

func parseHex(_ text: String) -> [UInt8]? {
    let digits = Array(text.utf8)
    guard digits.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    for index in stride(from: 0, to: digits.count, by: 2) {
        guard let byte = UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) else {
            return nil
        }
        bytes.append(byte)
    }
    return bytes
}

/// The schema of the two-process tests, as `StoreTwoProcessTests` declares it (the same as `TestSchema`).
func twoProcessSchema(holdsMigration: Bool = false) -> SQLiteSchema {
    SQLiteSchema(
        tables: [.durable("settings"), .durable("outbox"), .disposable("messages"), SQLiteMarkerStorage.table],
        migrations: [
            .init(version: 1, name: "create") { db in
                try db.executeScript(
                    """
                    CREATE TABLE settings(key TEXT PRIMARY KEY, value TEXT NOT NULL);
                    CREATE TABLE outbox(id INTEGER PRIMARY KEY, payload BLOB NOT NULL, created_at INTEGER NOT NULL);
                    CREATE TABLE messages(id TEXT PRIMARY KEY, body TEXT, seen INTEGER NOT NULL DEFAULT 0);
                    """)
                try SQLiteMarkerStorage.createTable(db)
                guard holdsMigration else { return }
                say("inside")
                // A child process, not a test thread: blocking here only holds this process's migration open,
                // until the parent closes the pipe (or exits, which closes it too).
                _ = FileHandle.standardInput.readDataToEndOfFile()
            }
        ])
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func outcome(_ open: () throws -> SQLiteDatabase) -> Never {
    do {
        let database = try open()
        let recovery = database.openReport.recovery.map { "\($0.reason)" } ?? "none"
        say("ok from=\(database.openReport.migratedFrom) recovery=\(recovery)")
        exit(0)
    } catch let error as StoreError {
        say("error \(error.shortDescription): \(error.message)")
        exit(1)
    } catch {
        say("error \(error)")
        exit(1)
    }
}

let arguments = CommandLine.arguments
let patient = SQLiteDatabase.Configuration(busyTimeout: .seconds(30))
switch arguments.dropFirst().first {
case "migrate" where arguments.count == 3 || (arguments.count == 4 && arguments[3] == "hold"):
    say("opening")
    var logging = patient
    logging.logger = TidingsLogger(subsystem: "child", minimumLevel: .debug) { say("log \($0.message)") }
    outcome {
        try SQLiteDatabase(
            path: arguments[2], schema: twoProcessSchema(holdsMigration: arguments.count == 4), configuration: logging)
    }
case "open" where arguments.count == 3:
    outcome { try SQLiteDatabase(path: arguments[2], schema: twoProcessSchema(), configuration: patient) }
case "advance-marker" where arguments.count == 5:
    do {
        let database = try SQLiteDatabase(
            path: arguments[2], schema: twoProcessSchema(), configuration: patient)
        let marker = try MonotonicMarker(key: arguments[3], storage: SQLiteMarkerStorage(database: database))
        switch try marker.advanceReporting(to: ServerID(arguments[4])) {
        case .moved: say("moved")
        case .refused: say("refused")
        case .overtaken(let stored): say("overtaken \(stored.rawValue)")
        }
        exit(0)
    } catch {
        fail("\(error)", status: 1)
    }
case "probe-locks" where arguments.count == 3:
    let path = arguments[2]
    let lockFile = open(path + ".lock", O_RDWR | O_CLOEXEC)
    if lockFile >= 0, flock(lockFile, LOCK_EX | LOCK_NB) == 0 {
        say("lock free")
    } else {
        say(lockFile >= 0 ? "lock held" : "lock absent")
    }
    if lockFile >= 0 { _ = close(lockFile) }
    for (name, file) in [("db", path), ("shm", path + "-shm")] {
        let descriptor = open(file, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            say("\(name) absent")
            continue
        }
        // The whole file (length 0 reaches past its end, where SQLite's lock bytes lie): any other process's
        // record lock there conflicts with a write lock, and F_GETLK names its holder.
        var probe = flock()
        probe.l_type = Int16(F_WRLCK)
        probe.l_whence = Int16(SEEK_SET)
        probe.l_start = 0
        probe.l_len = 0
        guard fcntl(descriptor, F_GETLK, &probe) == 0 else { fail("F_GETLK on \(file): errno \(errno)", status: 1) }
        say(probe.l_type == Int16(F_UNLCK) ? "\(name) free" : "\(name) held by \(probe.l_pid)")
        _ = close(descriptor)
    }
    exit(0)
case "write-rows" where arguments.count == 5:
    guard let first = Int(arguments[3]), let count = Int(arguments[4]), count >= 0 else {
        fail("usage: StoreCrashWriter write-rows <database path> <first id> <count>", status: 64)
    }
    do {
        let database = try SQLiteDatabase(path: arguments[2], schema: twoProcessSchema(), configuration: patient)
        for id in first..<first + count {
            try database.write { db in
                try db.execute("INSERT INTO outbox(id, payload, created_at) VALUES (?, ?, 0)", [id, [UInt8(2)]])
            }
            say("wrote \(id)")
        }
        database.close()
        say("done")
        exit(0)
    } catch {
        fail("\(error)", status: 1)
    }
default:
    break
}

guard arguments.count == 3, let keyBytes = parseHex(arguments[2]) else {
    fail("usage: StoreCrashWriter <database path> <64 hex digits>", status: 64)
}
do {
    let cipher = try ValueCipher(key: try TidingsCrypto.SymmetricKey(bytes: keyBytes))
    let database = try SQLiteDatabase(
        path: arguments[1], schema: StoreCrashOutbox.schema, configuration: .init(cipher: cipher))
    if let recovery = database.openReport.recovery {
        fail("store needed recovery: \(recovery.reason)", status: 1)
    }
    var nextID = try database.read { try $0.fetchOne(Int64?.self, "SELECT max(id) FROM outbox") ?? nil } ?? 0
    while true {
        nextID += 1
        let id = nextID
        let plaintext = TidingsCrypto.SecureRandom.bytes(512)
        try database.write { db in
            let sealed = try cipher.seal(plaintext, table: "outbox", column: "payload", rowID: id)
            try db.execute(
                "INSERT INTO outbox(id, payload, created_at, checksum) VALUES (?, ?, ?, ?)",
                [id, sealed, Int64(Date().timeIntervalSince1970 * 1000), StoreCrashOutbox.checksum(plaintext)])
        }
        FileHandle.standardOutput.write(Data("\(id)\n".utf8))
    }
} catch {
    fail("\(error)", status: 1)
}
