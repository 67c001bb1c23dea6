import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox

/// The reader knows who they are (seed 002 §5): sign-in learns the account's own ID
/// (`GET /api/v1/accounts/verify_credentials`, answered by every sandbox variant) and keeps it with the account's
/// record, so a relaunch knows it without asking.
@Suite(.timeLimit(.minutes(1)))
struct MastodonSyncReaderIDTests {
    private static let alice = "alice@sandbox"

    @Test(arguments: [MastodonSandboxVariant.mastodon, .pleroma, .goToSocial, .nextcloud])
    func signInLearnsTheReadersOwnIDAndARelaunchKeepsIt(variant: MastodonSandboxVariant) async throws {
        let base = try await EngineFixture(variant: variant)
        let client = MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: Self.alice,
            authorization: MastodonAuthorization(token: "alice-token"),
            transport: MastodonSandboxTransport(server: base.http))
        let sync = MastodonSync(clock: base.clock, settings: MastodonPollSettings(preset: .manual), random: { 0.5 })
        let engine = await sync.addAccount(client: client, store: base.store)
        #expect(await engine.readerID == ServerID(base.alice))
        #expect(base.requests("/api/v1/accounts/verify_credentials") == 1)
        #expect(try await base.store.storedAccounts().map(\.readerID) == [ServerID(base.alice)])
        await sync.shutdown()

        // A relaunch over the same store: the kept ID, no second request.
        let relaunched = MastodonSync(
            clock: base.clock, settings: MastodonPollSettings(preset: .manual), random: { 0.5 })
        let engines = try await relaunched.restoreAccounts(from: base.store) { _ in client }
        #expect(await engines.first?.readerID == ServerID(base.alice))
        #expect(base.requests("/api/v1/accounts/verify_credentials") == 1)
        await relaunched.shutdown()
    }

    @Test func anOfflineSignInLearnsItWhenTheNetworkReturns() async throws {
        let base = try await EngineFixture()
        let sync = MastodonSync(
            clock: base.clock, settings: MastodonPollSettings(preset: .manual), rateLimiting: .disabled,
            random: { 0.5 })
        base.faults.add(.status(503), on: .path("/api/"))
        let engine = await sync.addAccount(
            client: MastodonAPIClient(
                server: URL(string: "https://sandbox.invalid")!, accountKey: Self.alice,
                authorization: MastodonAuthorization(token: "alice-token"),
                transport: MastodonSandboxTransport(server: base.http)),
            store: base.store)
        #expect(await engine.readerID == nil)
        base.faults.clear()
        await sync.appStateChanged(.networkPath(.offline))
        await sync.appStateChanged(.networkPath(.wifi))
        await sync.housekeepingSettled()
        #expect(await engine.readerID == ServerID(base.alice))
        #expect(try await base.store.storedAccounts().map(\.readerID) == [ServerID(base.alice)])
        await sync.shutdown()
    }
}
