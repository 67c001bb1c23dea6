import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsPush
import TidingsSandbox

/// Acting from a notification goes through the engine's durable outbox, from a second process: the
/// notification extension opens the same store file with its own `SQLiteDatabase` and engine, favourites,
/// boosts and mutes the conversation; the server gets each once, and the app's engine reads the result.
@Suite(.timeLimit(.minutes(1))) struct ActingFromANotificationTests {
    @Test func favouriteBoostAndMuteFromASecondConnectionToTheStore() async throws {
        let clock = TestClock()
        let server = MastodonSandboxServer()
        let http = server.httpServer(clock: clock)
        let alice = await server.addAccount(username: "alice", token: "alice-token")
        let bob = await server.addAccount(username: "bob", token: "bob-token")
        await server.follow(alice, bob)
        let mention = await server.post(as: bob, "@alice coffee?", mentioning: [alice])
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("acting-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("store.sqlite").path

        func engine(_ database: SQLiteDatabase) async throws -> MastodonAccountEngine {
            let client = GlueFixture.client(http, token: "alice-token")
            return MastodonAccountEngine(
                client: client, store: MastodonTimelineStore(database: database),
                capabilities: try await MastodonCapabilities.fetch(with: client), clock: clock)
        }
        // The app: polls, and caches the mention's status on its home timeline.
        let appDatabase = try await SQLiteDatabase.open(path: path, schema: GlueFixture.schema)
        defer { appDatabase.close() }
        let app = try await engine(appDatabase)
        try await app.pollNotifications()
        try await app.refresh()
        // The extension: its own connection to the same file, and its own engine.
        let extensionDatabase = try await SQLiteDatabase.open(path: path, schema: GlueFixture.schema)
        defer { extensionDatabase.close() }
        let notificationExtension = try await engine(extensionDatabase)
        let id = ServerID(mention)
        for action in [MastodonAction.favourite, .reblog, .mute] {
            #expect(try await notificationExtension.perform(action, on: id) != nil)
        }
        #expect(try await notificationExtension.pendingActions().isEmpty)
        let seen = try await GlueFixture.client(http, token: "alice-token").status(id: id)
        #expect(seen.favourited == true)
        #expect(seen.reblogged == true)
        #expect(seen.muted == true)
        // The app's engine sees the outbox drained and the new state, through its own connection.
        #expect(try await app.pendingActions().isEmpty)
        #expect(try await app.status(id)?.muted == true)
        // Muting twice is nothing to do.
        #expect(try await notificationExtension.perform(.mute, on: id) == nil)
    }
}
