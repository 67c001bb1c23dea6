import Foundation
import Testing
import TidingsCore
import TidingsPush

@Suite(.timeLimit(.minutes(1))) struct NextcloudRaisedNotificationsTests {
    static let schema = SQLiteSchema(
        tables: [NextcloudRaisedNotifications.table],
        migrations: [.init(version: 1, name: "raised") { try NextcloudRaisedNotifications.createTable($0) }])

    @Test func deletesWithdrawWhatWasRaisedOnceAndOnlyForTheirAccount() async throws {
        let map = NextcloudRaisedNotifications(database: try SQLiteDatabase.inMemory(schema: Self.schema))
        try await map.record(account: "ada", nid: 1, raisedIdentifier: "r1")
        try await map.record(account: "ada", nid: 2, raisedIdentifier: "r2")
        try await map.record(account: "ada", nid: 3, raisedIdentifier: "r3")
        try await map.record(account: "bob", nid: 1, raisedIdentifier: "b1")

        #expect(try await map.outcome(of: .delete(nid: 1), account: "ada") == .withdraw(raisedIdentifiers: ["r1"]))
        // Handed out once: a repeated delete (the proxy may deliver twice) withdraws nothing.
        #expect(try await map.outcome(of: .delete(nid: 1), account: "ada") == .withdraw(raisedIdentifiers: []))
        #expect(
            try await map.outcome(of: .deleteMultiple(nids: [3, 9]), account: "ada")
                == .withdraw(raisedIdentifiers: ["r3"]))
        #expect(try await map.outcome(of: .deleteAll, account: "ada") == .withdraw(raisedIdentifiers: ["r2"]))
        #expect(try await map.outcome(of: .deleteAll, account: "bob") == .withdraw(raisedIdentifiers: ["b1"]))
    }

    @Test func socialPushesPollAndOtherAppsRaise() async throws {
        let map = NextcloudRaisedNotifications(database: try SQLiteDatabase.inMemory(schema: Self.schema))
        let social = NextcloudProxySubject.notification(nid: 5, app: "social", subject: "s", type: nil, id: nil)
        #expect(try await map.outcome(of: social, account: "ada") == .pollNotifications(nid: 5))
        let talk = NextcloudProxySubject.notification(nid: 6, app: "spreed", subject: "s", type: "chat", id: "x")
        #expect(
            try await map.outcome(of: talk, account: "ada")
                == .raise(nid: 6, app: "spreed", subject: "s", type: "chat", id: "x"))
    }

    @Test func theMapSurvivesReopeningTheStore() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nc-raised-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        let first = try await SQLiteDatabase.open(path: path, schema: Self.schema)
        try await NextcloudRaisedNotifications(database: first).record(account: "ada", nid: 7, raisedIdentifier: "r7")
        first.close()
        let second = try await SQLiteDatabase.open(path: path, schema: Self.schema)
        defer { second.close() }
        #expect(
            try await NextcloudRaisedNotifications(database: second).outcome(of: .delete(nid: 7), account: "ada")
                == .withdraw(raisedIdentifiers: ["r7"]))
    }
}
