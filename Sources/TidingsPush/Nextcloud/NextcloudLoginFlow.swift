import Foundation
import TidingsCore
import TidingsNet

/// A started Login Flow v2: the page the person opens to grant access, and the poll that tells when they did.
/// Its `description` hides the poll token (whoever holds it receives the app password).
public struct NextcloudLoginFlowSession: Sendable, Hashable, CustomStringConvertible {
    /// The page to open in a browser (`login`), where the person signs in and grants access.
    public let loginURL: URL
    /// Where to poll (`poll.endpoint`), on the server's host.
    public let pollEndpoint: URL
    /// The poll token (`poll.token`), sent only in the poll's form body. - Warning: secret.
    public let pollToken: String

    /// Creates a session (e.g. restored after the app was suspended while the person signed in).
    public init(loginURL: URL, pollEndpoint: URL, pollToken: String) {
        self.loginURL = loginURL
        self.pollEndpoint = pollEndpoint
        self.pollToken = pollToken
    }

    /// The login page's host; never the token.
    public var description: String { "NextcloudLoginFlowSession(\(loginURL.host ?? "?"), token: redacted)" }
}

extension NextcloudLoginFlowSession {
    /// Reads the answer to `POST /index.php/login/v2` of the server at `serverURL` (a server's wire input: fuzzed).
    ///
    /// - Throws: `NextcloudPushError.malformedResponse` for anything but `{"poll": {"token", "endpoint"}, "login"}`
    ///   with a token of 1 to 1024 bytes and both URLs on the server's host and port, never `http` for an `https`
    ///   server (a hostile answer must not send the token elsewhere).
    public init(flowResponse body: [UInt8], serverURL: URL) throws(NextcloudPushError) {
        guard let value = try? JSONValue(parsing: body, maximumDepth: 4),
            let login = value["login"]?.stringValue.flatMap(URL.init(string:)),
            let endpoint = value["poll"]?["endpoint"]?.stringValue.flatMap(URL.init(string:)),
            let token = value["poll"]?["token"]?.stringValue, !token.isEmpty, token.utf8.count <= 1024,
            NextcloudLoginFlow.isSameServer(login, as: serverURL),
            NextcloudLoginFlow.isSameServer(endpoint, as: serverURL)
        else { throw NextcloudPushError(.malformedResponse, detail: "not a Login Flow v2 answer", step: "login") }
        self.init(loginURL: login, pollEndpoint: endpoint, pollToken: token)
    }
}

/// What Login Flow v2 hands back once the person granted access: the server to use and the account's login.
public struct NextcloudLogin: Sendable, Hashable, CustomStringConvertible {
    /// The server's base URL as the server named it (`server`).
    public let serverURL: URL
    /// The login name and the new app password (`loginName`, `appPassword`).
    public let credentials: NextcloudCredentials

    /// Creates a login.
    public init(serverURL: URL, credentials: NextcloudCredentials) {
        self.serverURL = serverURL
        self.credentials = credentials
    }

    /// Server and user; never the app password.
    public var description: String { "NextcloudLogin(\(serverURL.host ?? "?"), \(credentials))" }

    /// Reads the granted poll's answer (`{server, loginName, appPassword}`) for a flow started at `serverURL` (a
    /// server's wire input: fuzzed).
    ///
    /// - Throws: `NextcloudPushError.malformedResponse` unless `server` is an `http`/`https` URL with a host (never
    ///   `http` for an `https` server), `loginName` holds 1 to 256 bytes and `appPassword` 1 to 1024.
    public init(pollResponse body: [UInt8], serverURL: URL) throws(NextcloudPushError) {
        guard let value = try? JSONValue(parsing: body, maximumDepth: 4),
            let server = value["server"]?.stringValue.flatMap(URL.init(string:)),
            let user = value["loginName"]?.stringValue, !user.isEmpty, user.utf8.count <= 256,
            let password = value["appPassword"]?.stringValue, !password.isEmpty, password.utf8.count <= 1024,
            ["http", "https"].contains(server.scheme?.lowercased()), server.host?.isEmpty == false,
            !(serverURL.scheme?.lowercased() == "https" && server.scheme?.lowercased() != "https")
        else { throw NextcloudPushError(.malformedResponse, detail: "not a Login Flow v2 login", step: "login") }
        self.init(serverURL: server, credentials: NextcloudCredentials(user: user, appPassword: password))
    }
}

/// Nextcloud's Login Flow v2, the way an app gets an app password without ever seeing the person's password:
/// `POST /index.php/login/v2` → a login page for the browser and a poll endpoint with a token → `POST` the token
/// (form body) to the endpoint until it answers `{server, loginName, appPassword}` instead of 404.
///
/// Guarantees:
/// - The token travels only in the poll's body and the app password only in the answer; neither is in a URL,
///   an error or a `description`.
/// - A poll endpoint or login page on another host than the server is refused (`malformedResponse`), so a
///   hostile answer cannot send the token elsewhere; neither can an answer that turns `https` into `http`.
/// - ``waitForLogin(_:)`` polls on the injected clock every ``pollInterval`` and gives up with
///   ``NextcloudPushError/loginExpired`` after ``lifetime`` (Nextcloud keeps a flow 20 minutes); it honours
///   cancellation, and each request has the transport's deadline.
public struct NextcloudLoginFlow: Sendable {
    /// Sends one request and returns the response whatever its status.
    public typealias Send = @Sendable (HTTPRequest) async throws -> HTTPResponse

    /// The server's base URL as the person typed it.
    public let serverURL: URL
    /// The wait between two polls.
    public let pollInterval: Duration
    /// How long a flow is polled before it counts as expired.
    public let lifetime: Duration
    private let send: Send
    private let timeline: Timeline

    /// A flow against `serverURL`.
    ///
    /// - Parameters:
    ///   - serverURL: The server's base URL (with its sub-path, if any).
    ///   - clock: Every wait between polls (`ContinuousClock` in an app, `TestClock` in tests).
    ///   - pollInterval: The wait between polls (2 s, like Nextcloud's own clients).
    ///   - lifetime: When polling stops (Nextcloud's 20 minutes).
    ///   - send: `HTTPClient.response(for:)`, or a sandbox in process.
    public init(
        serverURL: URL, clock: any Clock<Duration> = ContinuousClock(), pollInterval: Duration = .seconds(2),
        lifetime: Duration = .seconds(1200), send: @escaping Send
    ) {
        self.serverURL = serverURL
        self.timeline = Timeline(clock)
        self.pollInterval = pollInterval
        self.lifetime = lifetime
        self.send = send
    }

    /// Starts a flow: the app opens ``NextcloudLoginFlowSession/loginURL`` in a browser, then polls.
    ///
    /// - Throws: `NextcloudPushError.refused` (a server without Login Flow v2, e.g. 404), `.malformedResponse`
    ///   (not the flow's JSON, or a poll endpoint on another host), `.transport`.
    public func start() async throws(NextcloudPushError) -> NextcloudLoginFlowSession {
        var request = HTTPRequest(method: .post, url: serverURL.appendingPathComponent("index.php/login/v2"))
        request.headers["Accept"] = "application/json"
        request.headers["User-Agent"] = "Tidings"
        let response = try await perform(request)
        guard response.status == 200 else { throw NextcloudOCSClient.refusal(response, step: "login") }
        return try NextcloudLoginFlowSession(flowResponse: [UInt8](response.body), serverURL: serverURL)
    }

    /// Polls once.
    ///
    /// - Returns: The login once the person granted access; nil while they have not (404).
    /// - Throws: `.refused` for another status, `.malformedResponse`, `.transport`.
    public func poll(_ session: NextcloudLoginFlowSession) async throws(NextcloudPushError) -> NextcloudLogin? {
        var request = HTTPRequest.form(.post, url: session.pollEndpoint, fields: [("token", session.pollToken)])
        request.headers["Accept"] = "application/json"
        let response = try await perform(request)
        if response.status == 404 { return nil }
        guard response.status == 200 else { throw NextcloudOCSClient.refusal(response, step: "login") }
        return try NextcloudLogin(pollResponse: [UInt8](response.body), serverURL: serverURL)
    }

    /// Polls every ``pollInterval`` until the person granted access.
    ///
    /// - Throws: ``NextcloudPushError/loginExpired`` after ``lifetime``; `CancellationError` when cancelled;
    ///   what ``poll(_:)`` throws.
    public func waitForLogin(_ session: NextcloudLoginFlowSession) async throws -> NextcloudLogin {
        let deadline = timeline.elapsed + lifetime
        while true {
            try Task.checkCancellation()
            if let login = try await poll(session) { return login }
            guard timeline.elapsed + pollInterval <= deadline else { throw NextcloudPushError.loginExpired }
            try await timeline.sleep(for: pollInterval)
        }
    }

    /// Whether `url` is on the server's host and port and keeps `https` when the server has it.
    static func isSameServer(_ url: URL, as serverURL: URL) -> Bool {
        guard let host = url.host?.lowercased(), !host.isEmpty, ["http", "https"].contains(url.scheme?.lowercased())
        else { return false }
        return host == serverURL.host?.lowercased() && url.port == serverURL.port
            && !(serverURL.scheme?.lowercased() == "https" && url.scheme?.lowercased() != "https")
    }

    private func perform(_ request: HTTPRequest) async throws(NextcloudPushError) -> HTTPResponse {
        do {
            return try await send(request)
        } catch {
            throw NextcloudPushError(.transport, detail: String(describing: type(of: error)), step: "login")
        }
    }
}
