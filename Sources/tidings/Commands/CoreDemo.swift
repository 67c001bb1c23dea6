import Foundation
import TidingsCore

/// The foundation at work: an encrypted store filled and read back, then a day of polling on a virtual clock.
let coreDemoPart = DemoPart(name: "core", title: "Core: an encrypted store, and a day of polling on a virtual clock") {
    try storeDemo()
    print("")
    await pollDayDemo()
}

/// The outbox of the demo: durable, with its payload sealed to its row.
private let demoSchema = SQLiteSchema(
    tables: [.durable("outbox")],
    migrations: [
        .init(version: 1, name: "outbox") { db in
            try db.execute("CREATE TABLE outbox(id INTEGER PRIMARY KEY, payload BLOB NOT NULL)")
        }
    ])

private func storeDemo() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tidings-demo-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("demo.sqlite").path
    let key = TidingsCrypto.SymmetricKey.random()
    let cipher = try ValueCipher(key: key)
    let drafts = ["Lunch at noon?", "Running 5 minutes late", "Photos from the trip"]

    let database = try SQLiteDatabase(path: path, schema: demoSchema, configuration: .init(cipher: cipher))
    try database.write { db in
        for (index, text) in drafts.enumerated() {
            let sealed = try cipher.seal(text, table: "outbox", column: "payload", rowID: Int64(index + 1))
            try db.execute("INSERT INTO outbox(id, payload) VALUES (?, ?)", [Int64(index + 1), sealed])
        }
    }
    let readBack = try database.read { db in
        try db.fetchAll("SELECT id, payload FROM outbox ORDER BY id") { row -> String in
            let id: Int64 = try row[0]
            let sealed: SealedValue = try row[1]
            return try cipher.openString(sealed, table: "outbox", column: "payload", rowID: id)
        }
    }
    let mode = (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? 0
    print(
        "Store: wrote \(drafts.count) outbox rows sealed with AES-256-GCM to a new file (mode \(String(mode, radix: 8)))."
    )
    for text in readBack { print("  read back: \"\(text)\"") }
    let fileBytes =
        [UInt8]((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data())
        + [UInt8]((try? Data(contentsOf: URL(fileURLWithPath: path + "-wal"))) ?? Data())
    let leaks = drafts.filter { contains(fileBytes, Array($0.utf8)) }
    print("  plaintext found in the database files: \(leaks.isEmpty ? "none" : leaks.joined(separator: ", "))")

    do {
        _ = try SQLiteDatabase(
            path: path, schema: demoSchema, configuration: .init(cipher: try ValueCipher(key: .random())))
        print("  opening with another key: opened (unexpected)")
    } catch StoreError.wrongKey {
        print("  opening with another key: refused with StoreError.wrongKey, file left alone")
    }

    let garbage = folder.appendingPathComponent("garbage.sqlite").path
    _ = FileManager.default.createFile(
        atPath: garbage, contents: Data((0..<4096).map { _ in UInt8.random(in: 0...255) }))
    let recovered = try SQLiteDatabase(path: garbage, schema: demoSchema)
    if let recovery = recovered.openReport.recovery {
        let moved = URL(fileURLWithPath: recovery.movedTo).lastPathComponent
        print("  a file of random bytes: moved aside to \(moved), fresh store opened (\(recovery.reason))")
    }
}

private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard !needle.isEmpty, haystack.count >= needle.count else { return false }
    for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
        if Array(haystack[start..<(start + needle.count)]) == needle { return true }
    }
    return false
}
