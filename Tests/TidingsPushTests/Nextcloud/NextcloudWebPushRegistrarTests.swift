import Foundation
import Testing
import TidingsCore
import TidingsNet
import TidingsPush

@Suite(.timeLimit(.minutes(1))) struct NextcloudWebPushRegistrarTests {
    static let server = URL(string: "https://cloud.example.org")!
    static let base = "cloud.example.org/ocs/v2.php/apps/notifications/api/v2/webpush"
    static let subscription = NextcloudWebPushSubscription(
        endpoint: URL(string: "https://up.example.org/push/abc")!, uaPublicKey: "BPUBKEY", auth: "AUTHSECRET")

    static func registrar(_ server: NextcloudScriptedServer) -> NextcloudWebPushRegistrar {
        NextcloudWebPushRegistrar(
            serverURL: Self.server, credentials: NextcloudCredentials(user: "ada", appPassword: "s3cret-app-pw")
        ) { await server.handle($0) }
    }

    @Test func registersThenActivatesWithTheTokenThatArrivedByPush() async throws {
        let server = NextcloudScriptedServer([
            "GET \(Self.base)/vapid": [(200, #"{"ocs":{"meta":{},"data":{"vapid":"BVAPID"}}}"#)],
            "POST \(Self.base)": [(201, #"{"ocs":{"meta":{},"data":[]}}"#)],
            "POST \(Self.base)/activate": [(202, "{}")],
        ])
        let registrar = Self.registrar(server)
        #expect(try await registrar.vapidKey() == "BVAPID")
        #expect(try await registrar.register(Self.subscription, appTypes: "all,-spreed") == .awaitingActivation)
        #expect(try await registrar.activate(decryptedPush: Array(#"{"activationToken":"tok-1"}"#.utf8)) == .active)
        let requests = await server.requests
        let registration = try JSONValue(parsing: [UInt8](try #require(requests[1].body)))
        #expect(registration["endpoint"]?.stringValue == "https://up.example.org/push/abc")
        #expect(registration["uaPublicKey"]?.stringValue == "BPUBKEY")
        #expect(registration["auth"]?.stringValue == "AUTHSECRET")
        #expect(registration["appTypes"]?.stringValue == "all,-spreed")
        let activation = try JSONValue(parsing: [UInt8](try #require(requests[2].body)))
        #expect(activation["activationToken"]?.stringValue == "tok-1")
        #expect(requests.allSatisfy { $0.headers["OCS-APIRequest"] == "true" })
    }

    @Test func alreadyActiveDisabledAndBadActivationPushes() async throws {
        let server = NextcloudScriptedServer([
            "POST \(Self.base)": [
                (200, "{}"), (403, #"{"ocs":{"meta":{"message":"WEBPUSH_DISABLED"},"data":[]}}"#),
                (400, #"{"ocs":{"meta":{},"data":{"message":"INVALID_ENDPOINT"}}}"#),
            ],
            "POST \(Self.base)/activate": [
                (400, #"{"ocs":{"meta":{},"data":{"message":"INVALID_ACTIVATION_TOKEN"}}}"#)
            ],
            "DELETE \(Self.base)": [(202, "{}")],
        ])
        let registrar = Self.registrar(server)
        #expect(try await registrar.register(Self.subscription) == .active)
        let disabled = try await registrar.register(Self.subscription)
        #expect(disabled == .disabledByAdministrator)
        #expect(disabled.message?.contains("administrator") == true)
        do {
            _ = try await registrar.register(Self.subscription)
            Issue.record("a 400 registered")
        } catch {
            #expect(error == .refused && error.detail == "INVALID_ENDPOINT")
        }
        await #expect(throws: NextcloudPushError.malformedSubject) {
            try await registrar.activate(decryptedPush: Array(#"{"nid":1}"#.utf8))
        }
        await #expect(throws: NextcloudPushError.refused) {
            try await registrar.activate(decryptedPush: Array(#"{"activationToken":"wrong"}"#.utf8))
        }
        try await registrar.unregister()
        #expect(await server.requests.count == 5)
    }
}
