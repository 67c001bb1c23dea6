import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox

/// The code of Documentation.docc/GettingStarted.md, run as written against the sample sandbox.
@Suite(.timeLimit(.minutes(1))) struct MastodonDocSnippetTests {
    @Test func gettingStartedRuns() async throws {
        let sandbox = await MastodonSandboxServer.sample()
        let budget = RateBudget(configuration: .mastodon, clock: ContinuousClock())
        let client = MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: "alice@sandbox.invalid",
            authorization: MastodonAuthorization(token: "alice-sandbox-token"),
            transport: MastodonSandboxTransport(server: sandbox.httpServer()), budget: budget)

        let capabilities = try await MastodonCapabilities.fetch(with: client)
        let tiers = MastodonTierPolicy.tiers(
            capabilities: capabilities,
            app: MastodonAppState(foreground: true, online: true, isActiveAccount: true),
            push: .none, auth: client.authorization.authState)
        #expect(tiers == MastodonTiers(push: false, streaming: true, polling: .safetyNet(minutes: 5)))

        var range: MastodonPageRange? = MastodonPageRange(limit: 40)
        var statuses: [MastodonStatus] = []
        while let current = range {
            let page = try await client.homeTimeline(current)
            statuses += page.items
            range = page.older
        }
        // 60 posts by bob and carol, carol's mention, alice's own post.
        #expect(statuses.count == 62)
    }
}
