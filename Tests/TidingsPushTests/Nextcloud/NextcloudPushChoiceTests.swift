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
}
