import Foundation
import Testing
import TidingsCore
import TidingsPush

/// Replays Tests/Fixtures/fuzz/nextcloud-login/ (the Nextcloud developer manual's Login Flow v2 examples and two
/// hostile answers, FuzzNextcloudLogin's seeds) through the fuzz target's checks, with every truncation and
/// single-bit flip of each file's first 128 bytes.
@Suite(.timeLimit(.minutes(1))) struct NextcloudLoginFuzzRegressionTests {
    static let server = URL(string: "https://cloud.example.org")!

    /// FuzzNextcloudLogin's promises; nil when kept (a refusal is fine: typed throws allow nothing else).
    static func problem(_ bytes: [UInt8]) -> String? {
        if let session = try? NextcloudLoginFlowSession(flowResponse: bytes, serverURL: server) {
            for url in [session.loginURL, session.pollEndpoint]
            where url.host?.lowercased() != "cloud.example.org" || url.scheme?.lowercased() != "https"
                || url.port != nil
            {
                return "accepted \(url.absoluteString)"
            }
            if session.pollToken.isEmpty || session.pollToken.utf8.count > 1024 { return "token size" }
            let json: JSONValue = .object([
                "poll": .object([
                    "token": .string(session.pollToken), "endpoint": .string(session.pollEndpoint.absoluteString),
                ]),
                "login": .string(session.loginURL.absoluteString),
            ])
            if (try? NextcloudLoginFlowSession(flowResponse: [UInt8](json.jsonData()), serverURL: server)) != session {
                return "flow round trip"
            }
        }
        if let login = try? NextcloudLogin(pollResponse: bytes, serverURL: server) {
            let (user, password) = (login.credentials.user.utf8.count, login.credentials.appPassword.utf8.count)
            if login.serverURL.scheme?.lowercased() != "https" || !(1...256).contains(user)
                || !(1...1024).contains(password)
            {
                return "accepted \(login)"
            }
            let json: JSONValue = .object([
                "server": .string(login.serverURL.absoluteString), "loginName": .string(login.credentials.user),
                "appPassword": .string(login.credentials.appPassword),
            ])
            if (try? NextcloudLogin(pollResponse: [UInt8](json.jsonData()), serverURL: server)) != login {
                return "login round trip"
            }
        }
        return nil
    }

    @Test func seedsAndTheirVariantsKeepThePromises() throws {
        let files = try PushTextFuzzRegressionTests.files("nextcloud-login")
        #expect(files.count >= 4)
        var checked = 0
        for (name, bytes) in files {
            for variant in PushTextFuzzRegressionTests.variants(bytes) {
                if let problem = Self.problem(variant) { Issue.record("\(name): \(problem)") }
                checked += 1
            }
        }
        #expect(checked > 1000)
    }

    @Test func theSeedsSayWhatTheyShould() throws {
        let files = Dictionary(uniqueKeysWithValues: try PushTextFuzzRegressionTests.files("nextcloud-login"))
        let flow = try NextcloudLoginFlowSession(flowResponse: try #require(files["flow.json"]), serverURL: Self.server)
        #expect(flow.pollEndpoint.path == "/login/v2/poll")
        let login = try NextcloudLogin(pollResponse: try #require(files["login.json"]), serverURL: Self.server)
        #expect(login.credentials.user == "username")
        #expect(throws: NextcloudPushError.malformedResponse) {
            try NextcloudLoginFlowSession(
                flowResponse: try #require(files["flow-other-host.json"]), serverURL: Self.server)
        }
        #expect(throws: NextcloudPushError.malformedResponse) {
            try NextcloudLogin(pollResponse: try #require(files["login-downgrade.json"]), serverURL: Self.server)
        }
    }
}
