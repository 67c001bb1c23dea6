// The crash test's child process: writes outbox-shaped rows, one transaction each, until it is killed.
//
// Usage: StoreCrashWriter <database path> <64 hex digits of an AES-256 key>
//
// After each commit returns, it prints the row's id on its own line with one unbuffered write, so every id
// the parent reads belongs to a committed row. Exit codes: 64 for bad arguments, 1 when the store fails.
import Foundation
import TidingsCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The outbox table, as `StoreCrashTests` declares it too.
let schema = DatabaseSchema(
    tables: [.durable("outbox")],
    migrations: [
        .init(version: 1, name: "outbox") { db in
            try db.execute(
                """
                CREATE TABLE outbox(
                    id INTEGER PRIMARY KEY, payload BLOB NOT NULL, created_at INTEGER NOT NULL,
                    checksum INTEGER NOT NULL)
                """)
        }
    ])

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

/// The first 8 bytes of SHA-256 as a signed integer: what the parent recomputes from the decrypted payload.
func checksum(_ bytes: [UInt8]) -> Int64 {
    SHA256.hash(bytes).prefix(8).reduce(Int64(0)) { ($0 << 8) | Int64($1) }
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let keyBytes = parseHex(arguments[2]) else {
    fail("usage: StoreCrashWriter <database path> <64 hex digits>", status: 64)
}
do {
    let cipher = try ValueCipher(key: try SymmetricKey(bytes: keyBytes))
    let database = try Database(path: arguments[1], schema: schema, configuration: .init(cipher: cipher))
    if let recovery = database.openReport.recovery {
        fail("store needed recovery: \(recovery.reason)", status: 1)
    }
    var nextID = try database.read { try $0.fetchOne(Int64?.self, "SELECT max(id) FROM outbox") ?? nil } ?? 0
    while true {
        nextID += 1
        let id = nextID
        let plaintext = SecureRandom.bytes(512)
        try database.write { db in
            let sealed = try cipher.seal(plaintext, table: "outbox", column: "payload", rowID: id)
            try db.execute(
                "INSERT INTO outbox(id, payload, created_at, checksum) VALUES (?, ?, ?, ?)",
                [id, sealed, Int64(Date().timeIntervalSince1970 * 1000), checksum(plaintext)])
        }
        FileHandle.standardOutput.write(Data("\(id)\n".utf8))
    }
} catch {
    fail("\(error)", status: 1)
}
