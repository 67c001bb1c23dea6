import Foundation
import Testing
import TidingsCore
import TidingsSandbox
import TidingsSandboxKit

@testable import tidings

/// `tidings mastodon sync` run from a timer converges: after the server edited one cached status and deleted
/// another, the next run leaves the store equal to the server's newest statuses, and `show` marks the edit.
@Suite(.timeLimit(.minutes(2))) struct MastodonSyncConvergesCommandTests {
    @Test(arguments: ["mastodon", "pleroma", "nextcloud"])
    func aSecondSyncAfterAnEditAndADeletionConverges(_ name: String) async throws {
        let variant: MastodonSandboxVariant =
            switch name {
            case "pleroma": .pleroma
            case "nextcloud": .nextcloud
            default: .mastodon
            }
        let server = MastodonSandboxServer(variant: variant)
        let alice = await server.addAccount(username: "alice", token: "alice-sandbox-token")
        let bob = await server.addAccount(username: "bob", token: "bob-sandbox-token")
        await server.follow(alice, bob)
        var ids: [String] = []
        for index in 0..<6 { ids.append(await server.post(as: bob, "<p>post \(index)</p>")) }
        let listener = try server.httpServer().serve()
        defer { listener.stop() }
        let store = try MastodonCommandTests.temporaryStore()
        let runner = Runner(root: tidingsRoot, environment: ["TIDINGS_MASTODON_TOKEN": "alice-sandbox-token"])
        let sync = ["mastodon", "sync", "--server", listener.url.absoluteString, "--store", store, "--json"]
        let first = await runner.capture(sync)
        #expect(first.status == 0, "\(first.standardError)")

        #expect(await server.edit(ids[4], content: "<p>post 4, corrected</p>"))
        #expect(await server.delete(ids[2]))
        let second = await runner.capture(sync)
        #expect(second.status == 0, "\(second.standardError)")
        let summary = try MastodonCommandTests.syncObject(second)
        let recheck = try #require(summary["recheck"] as? [String: Any], "\(summary)")
        #expect(recheck["deleted"] as? Int == 1)
        #expect(recheck["batched"] as? Bool == (name == "mastodon"))
        #expect((summary["home"] as? [String: Any])?["cached"] as? Int == 5)

        let show = await runner.capture(["mastodon", "show", "--store", store, "--limit", "10", "--json"])
        #expect(show.status == 0, "\(show.standardError)")
        let rows = try show.standardOutput.split(separator: "\n").dropFirst().map(MastodonCommandTests.object)
        let shown = rows.compactMap { $0["id"] as? String }
        // The server's newest statuses, newest first: the deleted one gone, the edit in place and marked.
        #expect(shown == [ids[5], ids[4], ids[3], ids[1], ids[0]])
        let edited = try #require(rows.first { $0["id"] as? String == ids[4] })
        #expect(edited["text"] as? String == "post 4, corrected")
        #expect(edited["edited"] as? Bool == true)
        #expect(rows.filter { $0["edited"] as? Bool == true }.count == 1)
        let text = await runner.capture(["mastodon", "show", "--store", store, "--limit", "10"])
        #expect(text.standardOutput.contains("bob: post 4, corrected (edited)"), "\(text.standardOutput)")
        #expect(!text.standardOutput.contains("post 2"))
    }
}
