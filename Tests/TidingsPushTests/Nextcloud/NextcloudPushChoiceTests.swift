import Foundation
import Testing
import TidingsCore
import TidingsNet
import TidingsPush

@Suite(.timeLimit(.minutes(1))) struct NextcloudPushChoiceTests {
    static let proxyOnly = NextcloudPushCapabilities(push: ["devices", "object-data", "delete"])
    static let both = NextcloudPushCapabilities(push: ["devices", "object-data", "delete", "webpush"])
    static let neither = NextcloudPushCapabilities(push: [])

    typealias Row = (
        PushRegistrationChoice.AccountKind, PushRegistrationChoice.Platform, NextcloudConnectionState,
        PushRegistrationChoice
    )
    static let table: [Row] = [
        (.mastodon, .apple, .disconnected, .mastodonWebPush),
        (.mastodon, .unifiedPush, .connected(both), .mastodonWebPush),
        (.nextcloudSocial, .apple, .connected(proxyOnly), .nextcloudProxy),
        (.nextcloudSocial, .apple, .connected(both), .nextcloudProxy),
        (.nextcloudSocial, .apple, .connected(neither), .none),
        (.nextcloudSocial, .unifiedPush, .connected(both), .nextcloudWebPush),
        (.nextcloudSocial, .unifiedPush, .connected(proxyOnly), .none),
        (.nextcloudSocial, .apple, .disconnected, .none),
        (.nextcloudSocial, .apple, .connecting, .none),
        (.nextcloudSocial, .unifiedPush, .failed(reason: "x"), .none),
        (.mastodon, .noPushService, .disconnected, .none),
        (.nextcloudSocial, .noPushService, .connected(both), .none),
    ]

    @Test func exactlyOneRegistrationPerAccount() {
        for (index, row) in Self.table.enumerated() {
            #expect(
                PushRegistrationChoice.choose(account: row.0, platform: row.1, nextcloud: row.2) == row.3,
                "row \(index)")
        }
    }

    @Test func capabilitiesComeFromTheOCSEnvelope() throws {
        let body = #"{"ocs":{"meta":{},"data":{"capabilities":{"notifications":{"push":["devices","webpush"]}}}}}"#
        let capabilities = try NextcloudPushCapabilities(capabilitiesResponse: Array(body.utf8))
        #expect(capabilities.supportsProxy && capabilities.supportsWebPush && !capabilities.supportsDelete)
        let bare = #"{"ocs":{"meta":{},"data":{"capabilities":{}}}}"#
        #expect(try NextcloudPushCapabilities(capabilitiesResponse: Array(bare.utf8)) == Self.neither)
        #expect(throws: NextcloudPushError.malformedResponse) {
            try NextcloudPushCapabilities(capabilitiesResponse: Array("<html>".utf8))
        }
    }

    @Test func theConnectionReportsConnectedOrFailedWithAReason() async throws {
        let capabilities = #"{"ocs":{"meta":{},"data":{"capabilities":{"notifications":{"push":["devices"]}}}}}"#
        let server = NextcloudScriptedServer([
            "GET cloud.example.org/ocs/v2.php/cloud/capabilities": [(200, capabilities), (401, "{}")]
        ])
        let connection = NextcloudConnection(
            serverURL: URL(string: "https://cloud.example.org")!,
            credentials: NextcloudCredentials(user: "ada", appPassword: "pw")
        ) { await server.handle($0) }
        #expect(connection.state == .disconnected)
        #expect(await connection.connect() == .connected(NextcloudPushCapabilities(push: ["devices"])))
        guard case .failed(let reason) = await connection.connect() else {
            Issue.record("a 401 connected")
            return
        }
        #expect(reason.contains("sign in again") && !reason.contains("pw"))
        connection.disconnect()
        #expect(connection.state == .disconnected)
    }

    /// What real servers answer, and servers that lack the keys: every variant gives exactly one choice per
    /// platform, and only what the list names.
    @Test(arguments: [
        // (capabilities JSON, Apple's choice, UnifiedPush's choice)
        (#"{"notifications":{"push":["devices","object-data","delete"]}}"#, "proxy", "none"),
        (
            #"{"notifications":{"push":["devices","object-data","delete","webpush","webpush-browsers"]}}"#, "proxy",
            "webpush"
        ),
        (#"{"notifications":{"push":["webpush"]}}"#, "none", "webpush"),
        (#"{"notifications":{"push":["webpush-browsers"]}}"#, "none", "none"),
        (#"{"notifications":{"ocs-endpoints":["list","get","delete"]}}"#, "none", "none"),
        (#"{"notifications":{"push":"devices"}}"#, "none", "none"),
        (#"{"notifications":{"push":[1,null,{"devices":true}]}}"#, "none", "none"),
        (#"{"notifications":[]}"#, "none", "none"),
        (#"{"core":{"pollinterval":60}}"#, "none", "none"),
        (#"[]"#, "none", "none"),
    ])
    func everyCapabilityVariantGivesOneChoice(capabilities: String, apple: String, unifiedPush: String) throws {
        let body = #"{"ocs":{"meta":{"status":"ok"},"data":{"capabilities":"# + capabilities + "}}}"
        let parsed = try NextcloudPushCapabilities(capabilitiesResponse: Array(body.utf8))
        let names: [PushRegistrationChoice: String] = [
            .nextcloudProxy: "proxy", .nextcloudWebPush: "webpush", .none: "none", .mastodonWebPush: "mastodon",
        ]
        let state = NextcloudConnectionState.connected(parsed)
        #expect(
            names[PushRegistrationChoice.choose(account: .nextcloudSocial, platform: .apple, nextcloud: state)] == apple
        )
        #expect(
            names[PushRegistrationChoice.choose(account: .nextcloudSocial, platform: .unifiedPush, nextcloud: state)]
                == unifiedPush)
        #expect(
            PushRegistrationChoice.choose(account: .mastodon, platform: .apple, nextcloud: state) == .mastodonWebPush)
    }

    @Test func aPushAccountsRegistrationFollowsItsConnection() async throws {
        let capabilities =
            #"{"ocs":{"meta":{},"data":{"capabilities":{"notifications":{"push":["devices","webpush"]}}}}}"#
        let server = NextcloudScriptedServer([
            "GET cloud.example.org/ocs/v2.php/cloud/capabilities": [(200, capabilities), (503, "{}")]
        ])
        let connection = NextcloudConnection(
            serverURL: URL(string: "https://cloud.example.org")!,
            credentials: NextcloudCredentials(user: "ada", appPassword: "pw")
        ) { await server.handle($0) }
        let account = PushAccount.nextcloudSocial(key: "ada@cloud.example.org", connection: connection)
        #expect(account.registration(on: .apple) == .none, "not connected yet: polled")
        await connection.connect()
        #expect(account.registration(on: .apple) == .nextcloudProxy)
        #expect(account.registration(on: .unifiedPush) == .nextcloudWebPush)
        #expect(account.registration(on: .noPushService) == .none)
        await connection.connect()
        guard case .failed(let reason) = account.nextcloudState else {
            Issue.record("a 503 connected")
            return
        }
        #expect(reason.contains("HTTP 503"))
        #expect(account.registration(on: .apple) == .none, "a failed connection falls back to polling")
        connection.disconnect()
        #expect(account.nextcloudState == .disconnected && account.registration(on: .unifiedPush) == .none)
        let mastodon = PushAccount.mastodon(key: "alice@example.social")
        #expect(mastodon.registration(on: .unifiedPush) == .mastodonWebPush && mastodon.nextcloud == nil)
    }
}
