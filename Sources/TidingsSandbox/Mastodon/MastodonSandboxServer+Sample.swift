import Foundation

extension MastodonSandboxServer {
    /// The sample accounts and their tokens (public demo tokens of a loopback sandbox, never secrets).
    public static let sampleAccounts: [(username: String, token: String)] = [
        ("alice", "alice-sandbox-token"), ("bob", "bob-sandbox-token"), ("carol", "carol-sandbox-token"),
    ]

    /// A sandbox with the sample accounts: alice follows bob and carol, who have posted 60 statuses between
    /// them; bob favourited and boosted one of alice's and carol mentioned her.
    public static func sample(
        variant: MastodonSandboxVariant = .mastodon, now: @escaping @Sendable () -> Date = { Date() }
    ) async -> MastodonSandboxServer {
        let server = MastodonSandboxServer(variant: variant, now: now)
        var ids: [String] = []
        for (username, token) in sampleAccounts {
            ids.append(await server.addAccount(username: username, token: token))
        }
        let (alice, bob, carol) = (ids[0], ids[1], ids[2])
        await server.follow(alice, bob)
        await server.follow(alice, carol)
        await server.follow(bob, alice)
        let own = await server.post(as: alice, "<p>Hello from the Tidings sandbox</p>")
        for index in 0..<60 {
            await server.post(as: index.isMultiple(of: 2) ? bob : carol, "<p>Sample post \(index)</p>")
        }
        await server.post(as: carol, "<p>@alice have a look</p>", mentioning: [alice])
        await server.sampleInteraction(by: bob, on: own)
        return server
    }

    private func sampleInteraction(by accountID: String, on statusID: String) {
        guard let index = liveIndex(statusID) else { return }
        statuses[index].favouritedBy.insert(accountID)
        notify(statuses[index].accountID, type: "favourite", from: accountID, status: statusID)
    }
}
