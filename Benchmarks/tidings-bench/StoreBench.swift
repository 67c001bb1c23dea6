import CSQLite
import Foundation
import TidingsCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// B1–B3: the store's typed API against the raw SQLite C API, on files in a temporary directory with the
/// same pragmas on both sides (WAL, synchronous=NORMAL, foreign keys).
let storeSuite = BenchSuite(name: "store", abstract: "SQLite store: typed vs raw inserts, fetches, sealed outbox") {
    reporter in
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("tidings-bench-store-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let bench = StoreBench(directory: directory)
    try bench.insertRows(reporter)
    try bench.fetchRows(reporter)
    try bench.sealedOutbox(reporter)
}

struct StoreBenchError: Error, CustomStringConvertible {
    var description: String
}

struct StoreBench {
    let directory: URL
    /// Runs per side, typed and raw interleaved so drift hits both alike. B1 and B2 compare the best thread CPU
    /// time of each side: on a shared machine, wall time mostly measures the other processes.
    let repetitions = 15

    static let columns = (0..<10).map { "c\($0)" }
    static let createTable = "CREATE TABLE t(\(columns.map { "\($0) INTEGER" }.joined(separator: ", ")))"
    static let insertSQL = "INSERT INTO t VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
    static let selectSQL = "SELECT \(columns.joined(separator: ", ")) FROM t"

    static let schema = SQLiteSchema(
        tables: [.disposable("t"), .durable("outbox")],
        migrations: [
            .init(version: 1, name: "bench") { db in
                try db.execute(createTable)
                try db.execute(
                    "CREATE TABLE outbox(id INTEGER PRIMARY KEY, payload BLOB NOT NULL, created_at INTEGER NOT NULL)")
            }
        ])

    private let counter = Counter()

    init(directory: URL) {
        self.directory = directory
    }

    func freshPath() -> String {
        directory.appendingPathComponent("\(counter.next()).sqlite").path
    }

    // MARK: B1

    func insertRows(_ reporter: BenchReporter) throws {
        let rows = 50_000
        var typed: [Timing] = []
        var typedArray: [Timing] = []
        var raw: [Timing] = []
        for _ in 0..<repetitions {
            let arrayDatabase = try SQLiteDatabase(path: freshPath(), schema: Self.schema)
            typedArray.append(
                try measureTimes {
                    try arrayDatabase.write { db in
                        for row in 0..<rows {
                            try db.execute(
                                Self.insertSQL,
                                [
                                    row, row &+ 1, row &+ 2, row &+ 3, row &+ 4, row &+ 5, row &+ 6, row &+ 7, row &+ 8,
                                    row &+ 9,
                                ])
                        }
                    }
                })
            let database = try SQLiteDatabase(path: freshPath(), schema: Self.schema)
            typed.append(
                try measureTimes {
                    try database.write { db in
                        for row in 0..<rows {
                            try db.execute(
                                Self.insertSQL, values: row, row &+ 1, row &+ 2, row &+ 3, row &+ 4, row &+ 5, row &+ 6,
                                row &+ 7, row &+ 8, row &+ 9)
                        }
                    }
                })
            let handle = try RawSQLite(path: freshPath())
            defer { handle.close() }
            try handle.exec(Self.createTable)
            raw.append(
                try measureTimes {
                    try handle.exec("BEGIN IMMEDIATE")
                    let statement = try handle.prepare(Self.insertSQL)
                    defer { sqlite3_finalize(statement) }
                    for row in 0..<rows {
                        for column in 0..<10 {
                            sqlite3_bind_int64(statement, Int32(column + 1), Int64(row &+ column))
                        }
                        guard sqlite3_step(statement) == SQLITE_DONE else { throw handle.error("insert") }
                        sqlite3_reset(statement)
                    }
                    try handle.exec("COMMIT")
                })
        }
        reporter.report(
            BenchResult(
                id: "B1", name: "insert 50,000 rows x 10 INTEGER columns in one transaction, typed vs raw C API",
                value: bestCPU(typed) * 1000, unit: "ms CPU", baseline: bestCPU(raw) * 1000,
                note:
                    "execute(_:values:); best thread CPU time of \(repetitions); wall medians \(wallMedian(typed)) / "
                    + "\(wallMedian(raw)) ms; the [arguments] form: "
                    + "\(String(format: "%.2f", bestCPU(typedArray) / bestCPU(raw)))x; target ratio <= 1.3"))
    }

    // MARK: B2

    func fetchRows(_ reporter: BenchReporter) throws {
        let rows = 200_000
        let path = freshPath()
        do {
            let database = try SQLiteDatabase(path: path, schema: Self.schema)
            try database.write { db in
                for row in 0..<rows {
                    try db.execute(
                        Self.insertSQL,
                        [row, row, row, row, row, row, row, row, row, row])
                }
            }
        }
        let database = try SQLiteDatabase(path: path, schema: Self.schema)
        let handle = try RawSQLite(path: path)
        defer { handle.close() }
        var typed: [Timing] = []
        var raw: [Timing] = []
        var typedSum = 0
        var rawSum = 0
        for _ in 0..<repetitions {
            typed.append(
                try measureTimes {
                    typedSum = try database.read { db in
                        var sum = 0
                        try db.forEachRow(Self.selectSQL) { row in
                            for column in 0..<10 { sum &+= try row[column] as Int }
                        }
                        return sum
                    }
                })
            raw.append(
                try measureTimes {
                    try handle.exec("BEGIN DEFERRED")
                    let statement = try handle.prepare(Self.selectSQL)
                    defer { sqlite3_finalize(statement) }
                    var sum = 0
                    while true {
                        let code = sqlite3_step(statement)
                        if code == SQLITE_DONE { break }
                        guard code == SQLITE_ROW else { throw handle.error("select") }
                        for column in 0..<10 { sum &+= Int(sqlite3_column_int64(statement, Int32(column))) }
                    }
                    try handle.exec("COMMIT")
                    rawSum = sum
                })
        }
        guard typedSum == rawSum else { throw StoreBenchError(description: "B2 sums differ: \(typedSum) vs \(rawSum)") }
        reporter.report(
            BenchResult(
                id: "B2", name: "fetch 200,000 rows x 10 INTEGER columns, typed row cursor vs raw C API",
                value: bestCPU(typed) * 1000, unit: "ms CPU", baseline: bestCPU(raw) * 1000,
                note:
                    "best thread CPU time of \(repetitions); wall medians \(wallMedian(typed)) / \(wallMedian(raw)) ms; "
                    + "target ratio <= 1.5"))
    }

    // MARK: B3

    func sealedOutbox(_ reporter: BenchReporter) throws {
        let rows = 5000
        let cipher = try ValueCipher(key: TidingsCrypto.SymmetricKey.random())
        let payload = [UInt8](repeating: 0x5A, count: 512)
        var typed: [Double] = []
        var raw: [Double] = []
        for _ in 0..<repetitions {
            let database = try SQLiteDatabase(
                path: freshPath(), schema: Self.schema, configuration: .init(cipher: cipher))
            typed.append(
                try measureSeconds {
                    for id in 0..<Int64(rows) {
                        try database.write { db in
                            let sealed = try cipher.seal(payload, table: "outbox", column: "payload", rowID: id)
                            try db.execute(
                                "INSERT INTO outbox(id, payload, created_at) VALUES (?, ?, ?)", [id, sealed, id])
                        }
                    }
                })
            let handle = try RawSQLite(path: freshPath())
            defer { handle.close() }
            try handle.exec(
                "CREATE TABLE outbox(id INTEGER PRIMARY KEY, payload BLOB NOT NULL, created_at INTEGER NOT NULL)")
            raw.append(
                try measureSeconds {
                    let statement = try handle.prepare("INSERT INTO outbox(id, payload, created_at) VALUES (?, ?, ?)")
                    defer { sqlite3_finalize(statement) }
                    for id in 0..<Int64(rows) {
                        sqlite3_bind_int64(statement, 1, id)
                        payload.withUnsafeBytes { bytes in
                            _ = sqlite3_bind_blob(
                                statement, 2, bytes.baseAddress, Int32(bytes.count), csqlite_transient())
                        }
                        sqlite3_bind_int64(statement, 3, id)
                        guard sqlite3_step(statement) == SQLITE_DONE else { throw handle.error("insert") }
                        sqlite3_reset(statement)
                    }
                })
        }
        reporter.report(
            BenchResult(
                id: "B3",
                name:
                    "autocommit insert of one AES-256-GCM sealed 512-byte value per transaction (baseline: raw, unencrypted)",
                value: Double(rows) / percentile(typed, 0.5), unit: "rows/s",
                baseline: Double(rows) / percentile(raw, 0.5),
                note:
                    "median of \(repetitions) x \(rows) rows (a floor, so the median, not the best: best \(Int(Double(rows) / best(typed))) rows/s); target >= 10,000 rows/s"
            ))
    }
}

/// The fastest run: interference from other processes only ever adds time.
func best(_ samples: [Double]) -> Double { samples.min() ?? .nan }

/// One run's CPU time on the measuring thread and its wall time, in seconds.
struct Timing {
    var cpu: Double
    var wall: Double
}

/// Measures `body`'s thread CPU time (user + system, excluding time the thread waited for a core) and wall time.
func measureTimes(_ body: () throws -> Void) rethrows -> Timing {
    let cpuStart = threadCPUSeconds()
    let wall = try measureSeconds(body)
    return Timing(cpu: threadCPUSeconds() - cpuStart, wall: wall)
}

func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// The lowest CPU time of the runs.
func bestCPU(_ samples: [Timing]) -> Double { best(samples.map(\.cpu)) }

/// The median wall time in milliseconds, rounded, for notes.
func wallMedian(_ samples: [Timing]) -> String {
    String(format: "%.1f", percentile(samples.map(\.wall), 0.5) * 1000)
}

/// A file name counter (a class so the value-typed bench can hand out names).
final class Counter: Sendable {
    private let value = LockedState(0)
    func next() -> Int {
        value.withLock { value in
            value += 1
            return value
        }
    }
}

/// The raw SQLite C API with the store's pragmas, for baselines.
struct RawSQLite {
    let handle: OpaquePointer

    init(path: String) throws {
        var handle: OpaquePointer?
        guard
            sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
                == SQLITE_OK, let handle
        else {
            sqlite3_close_v2(handle)
            throw StoreBenchError(description: "cannot open \(path)")
        }
        self.handle = handle
        sqlite3_busy_timeout(handle, 5000)
        try exec("PRAGMA journal_mode = WAL")
        try exec("PRAGMA synchronous = NORMAL")
        try exec("PRAGMA foreign_keys = ON")
    }

    func close() { sqlite3_close_v2(handle) }

    func exec(_ sql: String) throws {
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else { throw error(sql) }
    }

    func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw error(sql)
        }
        return statement
    }

    func error(_ context: String) -> StoreBenchError {
        StoreBenchError(description: "\(context): \(String(cString: sqlite3_errmsg(handle)))")
    }
}
