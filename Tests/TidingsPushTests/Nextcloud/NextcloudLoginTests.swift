import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsNet
import TidingsPush
import TidingsSandbox
import TidingsSandboxKit

/// The library's way to connect a Nextcloud account: Login Flow v2 for an app password, then the connection and
/// the Social API with that password as HTTP Basic; secrets never in a URL or a description.
@Suite(.timeLimit(.minutes(1))) struct NextcloudLoginTests {
    static let server = URL(string: "http://sandbox.invalid")!

    /// Records every request the app sends, then hands it to the sandbox in process.
    final class Recorder: Sendable {
        let requests = LockedState<[HTTPRequest]>([])
        let sandbox: NextcloudSandboxServer
        init(_ sandbox: NextcloudSandboxServer) { self.sandbox = sandbox }

        var send: @Sendable (HTTPRequest) async throws -> HTTPResponse {
            { [self] request in
                requests.withLock { $0.append(request) }
                return try await NextcloudSandboxEndToEndTests.send(sandbox)(request)
            }
        }
    }

    @Test func loginFlowV2YieldsAnAppPasswordThatConnectsAndReadsTheSocialAPI() async throws {
        let sandbox = try NextcloudSandboxServer()
        let recorder = Recorder(sandbox)
        let flow = NextcloudLoginFlow(serverURL: Self.server, send: recorder.send)
        let session = try await flow.start()
        #expect(session.loginURL.host == "sandbox.invalid" && session.pollEndpoint.host == "sandbox.invalid")
        #expect(!session.description.contains(session.pollToken))
        #expect(try await flow.poll(session) == nil, "not granted yet: 404")
        // The person presses "Grant access" on the login page (its form posts back to the page).
        let loginPage = try await recorder.send(HTTPRequest(method: .get, url: session.loginURL))
        #expect(String(decoding: loginPage.body, as: UTF8.self).contains("Grant access"))
        #expect(try await recorder.send(HTTPRequest(method: .post, url: session.loginURL)).status == 200)
        let login = try #require(try await flow.poll(session))
        #expect(login.credentials == NextcloudCredentials(user: sandbox.user, appPassword: sandbox.appPassword))
        #expect(!login.description.contains(sandbox.appPassword))
        #expect(try await flow.poll(session) == nil, "a login is handed out once")

        let connection = NextcloudConnection(login: login, send: recorder.send)
        #expect(connection.state == .disconnected)
        guard case .connected(let capabilities) = await connection.connect() else {
            Issue.record("not connected: \(connection.state)")
            return
        }
        #expect(capabilities.supportsProxy)

        // The Social API with the app password as Basic, through the engine's API client.
        await sandbox.createNotification(app: "social", subject: "bob mentioned you", author: "bob")
        let client = MastodonAPIClient(
            server: login.serverURL.appendingPathComponent("index.php/apps/social"), accountKey: "ada@sandbox",
            authorization: MastodonAuthorization(token: "unused"),
            transport: NextcloudSocialTransport(credentials: login.credentials, send: recorder.send))
        let page = try await client.notifications()
        #expect(page.items.count == 1)

        let sent = recorder.requests.withLock { $0 }
        let basic = "Basic " + Data("\(sandbox.user):\(sandbox.appPassword)".utf8).base64EncodedString()
        for request in sent {
            #expect(!request.url.absoluteString.contains(sandbox.appPassword))
            #expect(!request.url.absoluteString.contains(session.pollToken))
            #expect(request.bearerToken == nil)
        }
        // The token went only in the poll's form body; the password only in the Authorization header.
        let polls = sent.filter { $0.url.path == "/index.php/login/v2/poll" }
        #expect(polls.count == 3)
        #expect(polls.allSatisfy { String(decoding: $0.body ?? Data(), as: UTF8.self) == "token=" + session.pollToken })
        let authenticated = sent.filter { $0.url.path.hasPrefix("/ocs/") || $0.url.path.hasPrefix("/index.php/apps/") }
        #expect(authenticated.count == 2)
        #expect(
            authenticated.allSatisfy { $0.headers["Authorization"] == basic && $0.headers["OCS-APIRequest"] == "true" })
    }

    @Test func waitingPollsOnTheClockUntilGrantedAndExpiresAfterItsLifetime() async throws {
        let sandbox = try NextcloudSandboxServer()
        let clock = TestClock()
        let flow = NextcloudLoginFlow(
            serverURL: Self.server, clock: clock, pollInterval: .seconds(2), lifetime: .seconds(10),
            send: NextcloudSandboxEndToEndTests.send(sandbox))
        let session = try await flow.start()
        let waiting = Task { try await flow.waitForLogin(session) }
        #expect(await clock.waitForSleepers(1))
        await clock.advance(by: .seconds(2))
        #expect(await clock.waitForSleepers(1))
        #expect(await sandbox.grantPendingLogins() == 1)
        await clock.advance(by: .seconds(2))
        #expect(try await waiting.value.credentials.user == sandbox.user)
        let polls = sandbox.http.log.entries.filter { $0.path == "/index.php/login/v2/poll" }.map(\.status)
        #expect(polls == [404, 404, 200])

        // Never granted: five polls over the 10 s lifetime, then a typed error.
        let ignored = try await flow.start()
        let expiring = Task { try await flow.waitForLogin(ignored) }
        await #expect(throws: NextcloudPushError.loginExpired) { try await clock.run(until: expiring) }
        let later = sandbox.http.log.entries.filter { $0.path == "/index.php/login/v2/poll" }.count
        #expect(later - polls.count == 6)
    }

    @Test func aRevokedAppPasswordFailsTheConnectionWithAReason() async throws {
        let sandbox = try NextcloudSandboxServer()
        let connection = NextcloudConnection(
            serverURL: Self.server, credentials: NextcloudCredentials(user: sandbox.user, appPassword: "revoked"),
            send: NextcloudSandboxEndToEndTests.send(sandbox))
        guard case .failed(let reason) = await connection.connect() else {
            Issue.record("a wrong app password connected")
            return
        }
        #expect(reason.contains("sign in again") && !reason.contains("revoked"))
        #expect(
            PushRegistrationChoice.choose(account: .nextcloudSocial, platform: .apple, nextcloud: connection.state)
                == .none)
        let social = MastodonAPIClient(
            server: Self.server.appendingPathComponent("index.php/apps/social"), accountKey: "ada@sandbox",
            authorization: MastodonAuthorization(token: "unused"),
            transport: NextcloudSocialTransport(
                credentials: NextcloudCredentials(user: sandbox.user, appPassword: "revoked"),
                send: NextcloudSandboxEndToEndTests.send(sandbox)))
        await #expect(throws: MastodonError.unauthorized) { _ = try await social.notifications() }
    }

    @Test func aFlowAnswerPointingAtAnotherHostIsRefused() async throws {
        let hostile = NextcloudScriptedServer([
            "POST cloud.example.org/index.php/login/v2": [
                (
                    200,
                    #"{"poll":{"token":"t0k","endpoint":"https://evil.example/poll"},"#
                        + #""login":"https://cloud.example.org/index.php/login/v2/flow/1"}"#
                )
            ],
            "POST cloud.example.org/index.php/login/v2/poll": [
                (200, #"{"server":"http://cloud.example.org","loginName":"ada","appPassword":"pw"}"#)
            ],
        ])
        let flow = NextcloudLoginFlow(serverURL: URL(string: "https://cloud.example.org")!) { await hostile.handle($0) }
        await #expect(throws: NextcloudPushError.malformedResponse) { _ = try await flow.start() }
        // A login that would downgrade an https server to http is refused too.
        let session = NextcloudLoginFlowSession(
            loginURL: URL(string: "https://cloud.example.org/index.php/login/v2/flow/1")!,
            pollEndpoint: URL(string: "https://cloud.example.org/index.php/login/v2/poll")!, pollToken: "t0k")
        await #expect(throws: NextcloudPushError.malformedResponse) { _ = try await flow.poll(session) }
        // A server without Login Flow v2.
        let none = NextcloudScriptedServer([:])
        let old = NextcloudLoginFlow(serverURL: URL(string: "https://cloud.example.org")!) { await none.handle($0) }
        do {
            _ = try await old.start()
            Issue.record("a 404 started a flow")
        } catch {
            #expect(error == .refused && error.status == 404 && error.step == "login")
        }
    }
}
