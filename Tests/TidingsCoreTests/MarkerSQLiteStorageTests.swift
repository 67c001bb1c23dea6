import Foundation
import PeerSupport
import Testing

@testable import TidingsCore

@Suite(.timeLimit(.minutes(1))) struct MarkerSQLiteStorageTests {
    static let schema = SQLiteSchema(
        tables: [SQLiteMarkerStorage.table],
        migrations: [.init(version: 1, name: "markers") { try SQLiteMarkerStorage.createTable($0) }])

    @Test func markerPersistsAcrossReopen() throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("markers.sqlite")
        do {
            let storage = SQLiteMarkerStorage(database: try SQLiteDatabase(path: path, schema: Self.schema))
            let marker = try MonotonicMarker(key: "home.read", storage: storage)
            #expect(try marker.advance(to: "999"))
            #expect(try marker.advance(to: "1000"))
            #expect(try !marker.advance(to: "999"))
        }
        let reopened = SQLiteMarkerStorage(database: try SQLiteDatabase(path: path, schema: Self.schema))
        let marker = try MonotonicMarker(key: "home.read", storage: reopened)
        #expect(marker.value == "1000")
        #expect(try reopened.loadMarker(key: "missing") == nil)
    }

    @Test func staleWriterCannotMoveTheStoredMarkerBack() throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("markers.sqlite")
        // Two handles on one file, as the app and its notification extension would have.
        let app = SQLiteMarkerStorage(database: try SQLiteDatabase(path: path, schema: Self.schema))
        let extensionStorage = SQLiteMarkerStorage(database: try SQLiteDatabase(path: path, schema: Self.schema))
        let appMarker = try MonotonicMarker(key: "notifications", storage: app)
        let staleMarker = try MonotonicMarker(key: "notifications", storage: extensionStorage)
        try appMarker.advance(to: "109372890233022")
        // The stale handle still believes nothing was stored; its write must not win.
        try staleMarker.advance(to: "99")
        #expect(try app.loadMarker(key: "notifications") == "109372890233022")
        try staleMarker.advance(to: "109372890233023")
        #expect(try app.loadMarker(key: "notifications") == "109372890233023")
    }

    @Test func sqlOrderMatchesServerIDOrder() throws {
        let storage = SQLiteMarkerStorage(database: try SQLiteDatabase.inMemory(schema: Self.schema))
        var generator = SplitMix64(seed: 11)
        let ids = ServerIDPropertyTests.randomStrings(count: 150, seed: 12).map { ServerID($0) }
        var expected: ServerID?
        for id in ids.shuffled(using: &generator) {
            try storage.saveMarker(id, key: "k")
            expected = expected.map { max($0, id) } ?? id
            #expect(try storage.loadMarker(key: "k") == expected, "after saving \(id)")
        }
    }

    @Test func serverIDColumnsReadTextAndIntegers() throws {
        let database = try SQLiteDatabase.inMemory(
            schema: SQLiteSchema(
                tables: [.durable("t")],
                migrations: [.init(version: 1, name: "t") { try $0.execute("CREATE TABLE t(a, b)") }]))
        try database.write { db in try db.execute("INSERT INTO t(a, b) VALUES (?, 12345678901234)", [ServerID("77")]) }
        let row = try database.read { db in
            try db.fetchOne("SELECT a, b FROM t") { row in (try row[0] as ServerID, try row[1] as ServerID) }
        }
        #expect(row?.0 == "77")
        #expect(row?.1 == "12345678901234")
        #expect(throws: StoreError.self) {
            try database.read { db in try db.fetchOne(ServerID.self, "SELECT 1.5") }
        }
    }
}
