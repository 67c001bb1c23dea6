import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// The signed-in accounts persist (`mastodon_accounts`): a relaunch knows them, a rebuild of the caches keeps
/// them (and the unsent actions), a sign-out forgets them, and no token is written.
@Suite(.timeLimit(.minutes(1)))
struct MastodonSyncAccountRegistryTests {
    /// Two sandbox hosts on one clock: alice and carol on the first, dora on the second; one store file.
    struct Hosts {
        let first: EngineFixture
        let second: MastodonSandboxServer
        let secondHTTP: SandboxHTTPServer
        let directory: URL
        let path: String

        init() async throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("accounts-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            path = directory.appendingPathComponent("store.sqlite").path
            first = try await EngineFixture(
                database: try await SQLiteDatabase.open(path: path, schema: MastodonTimelineSchema.schema))
            let carol = await first.server.addAccount(username: "carol", token: "carol-token")
            await first.server.follow(carol, first.bob)
            second = MastodonSandboxServer(variant: .mastodon)
            secondHTTP = second.httpServer(faults: SandboxFaultSwitch(), log: SandboxRequestLog(), clock: first.clock)
            let dora = await second.addAccount(username: "dora", token: "dora-token")
            let eve = await second.addAccount(username: "eve", token: "eve-token")
            await second.follow(dora, eve)
            await second.post(as: eve, "hello from the second host")
        }

        static let firstURL = URL(string: "https://one.invalid")!
        static let secondURL = URL(string: "https://two.invalid")!

        /// The client the app builds for a stored account from the token it keeps for its key.
        func client(key: String, server: URL) -> MastodonAPIClient? {
            let tokens = ["alice@one": "alice-token", "carol@one": "carol-token", "dora@two": "dora-token"]
            guard let token = tokens[key] else { return nil }
            let http = server.host == Self.secondURL.host ? secondHTTP : first.http
            return MastodonAPIClient(
                server: server, accountKey: key, authorization: MastodonAuthorization(token: token),
                transport: MastodonSandboxTransport(server: http))
        }

        func sync() -> MastodonSync {
            MastodonSync(
                clock: first.clock, settings: MastodonPollSettings(preset: .manual),
                streamConnector: MastodonSandboxServer.inProcessStreamConnector(first.http), random: { 0.5 })
        }

        func open(_ schema: SQLiteSchema = MastodonTimelineSchema.schema) async throws -> MastodonTimelineStore {
            MastodonTimelineStore(database: try await SQLiteDatabase.open(path: path, schema: schema))
        }
    }

    @Test func aRelaunchSignsInAgainEveryAccountOnEveryHost() async throws {
        let hosts = try await Hosts()
        defer { try? FileManager.default.removeItem(at: hosts.directory) }
        let sync = hosts.sync()
        for (key, server) in [
            ("alice@one", Hosts.firstURL), ("carol@one", Hosts.firstURL), ("dora@two", Hosts.secondURL),
        ] {
            await sync.addAccount(
                client: try #require(hosts.client(key: key, server: server)), store: hosts.first.store)
        }
        await sync.shutdown()
        hosts.first.store.database.close()

        let store = try await hosts.open()
        let stored = try await store.storedAccounts()
        #expect(stored.map(\.key) == ["alice@one", "carol@one", "dora@two"])
        #expect(stored.map(\.server.host) == ["one.invalid", "one.invalid", "two.invalid"])
        let relaunched = hosts.sync()
        let engines = try await relaunched.restoreAccounts(from: store) { hosts.client(key: $0.key, server: $0.server) }
        #expect(engines.map(\.account) == ["alice@one", "carol@one", "dora@two"])
        #expect(await relaunched.accountKeys == ["alice@one", "carol@one", "dora@two"])
        // They work: dora's home comes from the second host.
        let dora = try #require(await relaunched.engine(for: "dora@two"))
        #expect(try await dora.refresh().inserted == 1)
        // No token is written anywhere in the file.
        await relaunched.shutdown()
        store.database.close()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: hosts.path))
        for token in ["alice-token", "carol-token", "dora-token"] {
            #expect(bytes.range(of: Data(token.utf8)) == nil)
        }
    }

    @Test func aSignOutIsForgottenAndAShutdownIsNot() async throws {
        let hosts = try await Hosts()
        defer { try? FileManager.default.removeItem(at: hosts.directory) }
        let sync = hosts.sync()
        await sync.addAccount(
            client: try #require(hosts.client(key: "alice@one", server: Hosts.firstURL)), store: hosts.first.store)
        await sync.addAccount(
            client: try #require(hosts.client(key: "carol@one", server: Hosts.firstURL)), store: hosts.first.store)
        await sync.signOut(account: "carol@one")
        await sync.shutdown()
        #expect(try await hosts.first.store.storedAccounts().map(\.key) == ["alice@one"])
    }

    @Test func aRebuildOfTheCachesKeepsTheAccountsAndTheUnsentActions() async throws {
        let hosts = try await Hosts()
        defer { try? FileManager.default.removeItem(at: hosts.directory) }
        let status = await hosts.first.postMany(3)[0]
        let sync = hosts.sync()
        let alice = await sync.addAccount(
            client: try #require(hosts.client(key: "alice@one", server: Hosts.firstURL)), store: hosts.first.store)
        await sync.addAccount(
            client: try #require(hosts.client(key: "dora@two", server: Hosts.secondURL)), store: hosts.first.store)
        try await alice.refresh()
        hosts.first.faults.add(.status(503), on: .path("/api/v1/statuses"))
        try await alice.perform(.favourite, on: status)
        await sync.shutdown()
        hosts.first.store.database.close()

        // A newer version of the app migrated the file; this one cannot read it, moves it aside and rebuilds
        // the caches empty, copying the durable tables.
        let current = MastodonTimelineSchema.schema
        let newer = SQLiteSchema(
            tables: current.tables,
            migrations: current.migrations + [
                .init(version: current.version + 1, name: "a later version") { db in
                    try db.execute("ALTER TABLE mastodon_statuses ADD COLUMN later INTEGER")
                }
            ])
        try await hosts.open(newer).database.close()
        let store = try await hosts.open()
        #expect(store.database.openReport.recovery?.keptAllDurableData == true)
        #expect(try await store.entries(MastodonTimelineKey(account: "alice@one", timeline: "home")).isEmpty)
        #expect(try await store.storedAccounts().map(\.key) == ["alice@one", "dora@two"])

        hosts.first.faults.clear()
        let relaunched = hosts.sync()
        try await relaunched.restoreAccounts(from: store) { hosts.client(key: $0.key, server: $0.server) }
        #expect(await relaunched.accountKeys == ["alice@one", "dora@two"])
        // The unsent favourite was kept too, and the relaunch's replay sent it.
        let engine = try #require(await relaunched.engine(for: "alice@one"))
        #expect(try await engine.pendingActions().isEmpty)
        #expect(try await engine.client.status(id: status).favourited == true)
        await relaunched.shutdown()
    }
}
