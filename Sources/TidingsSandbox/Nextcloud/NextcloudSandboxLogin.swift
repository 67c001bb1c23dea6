import Foundation
import TidingsCore
import TidingsSandboxKit

/// The sandbox's Login Flow v2: flows started by `POST /index.php/login/v2`, granted when the person presses
/// "Grant access" on the login page (`POST /index.php/login/v2/flow/:id`, or ``NextcloudSandboxServer/grantLogin(_:)``),
/// and handed out once to the poll that carries the flow's token.
actor NextcloudSandboxLogin {
    struct Flow {
        let id: String
        var granted = false
    }

    /// token → flow; a flow leaves when its login is handed out.
    private var flows: [String: Flow] = [:]

    /// Starts a flow: its token and the id in its login page's path.
    func start() -> (token: String, id: String) {
        let token = Self.random(64)
        let id = Self.random(32)
        flows[token] = Flow(id: id)
        return (token, id)
    }

    /// The person granted the flow whose page is `id`; false for no such flow.
    func grant(id: String) -> Bool {
        guard let token = flows.first(where: { $0.value.id == id })?.key else { return false }
        flows[token]?.granted = true
        return true
    }

    /// Grants every flow still waiting; returns how many.
    func grantAll() -> Int {
        let waiting = flows.filter { !$0.value.granted }.map(\.key)
        for token in waiting { flows[token]?.granted = true }
        return waiting.count
    }

    /// Whether the poll with `token` gets the login now (once: the flow is then gone).
    func take(token: String) -> Bool {
        guard flows[token]?.granted == true else { return false }
        flows[token] = nil
        return true
    }

    private static func random(_ bytes: Int) -> String {
        TidingsCrypto.SecureRandom.bytes(bytes).map { String(format: "%02x", $0) }.joined()
    }
}

extension NextcloudSandboxServer {
    /// Login Flow v2 on the sandbox: start, the login page with its grant button, and the poll (404 until
    /// granted, then `{server, loginName, appPassword}` once).
    static func addLoginRoutes(
        _ router: inout SandboxHTTPRouter, _ state: NextcloudSandboxState, _ login: NextcloudSandboxLogin
    ) {
        router.add("POST", "/index.php/login/v2") { request in
            let base = baseURL(request)
            let (token, id) = await login.start()
            return .json(
                JSONValue.object([
                    "poll": .object(["token": .string(token), "endpoint": .string(base + "/index.php/login/v2/poll")]),
                    "login": .string(base + "/index.php/login/v2/flow/" + id),
                ]))
        }
        router.add("GET", "/index.php/login/v2/flow/:id") { request in
            var response = SandboxHTTPResponse.text(
                "<html><body><form method=\"post\"><button>Grant access</button></form></body></html>")
            response.headers["Content-Type"] = "text/html; charset=utf-8"
            return response
        }
        router.add("POST", "/index.php/login/v2/flow/:id") { request in
            guard let id = request.pathParameters["id"], await login.grant(id: id) else {
                return .text("", status: 404)
            }
            return .text("Access granted: you may close this window.")
        }
        router.add("POST", "/index.php/login/v2/poll") { request in
            guard let token = request.formFields.first(where: { $0.name == "token" })?.value,
                await login.take(token: token)
            else { return .json(JSONValue.array([]), status: 404) }
            return .json(
                JSONValue.object([
                    "server": .string(baseURL(request)), "loginName": .string(state.user),
                    "appPassword": .string(state.appPassword),
                ]))
        }
    }

    /// `http://<Host>` of the request (the sandbox serves plain HTTP on loopback).
    static func baseURL(_ request: SandboxHTTPRequest) -> String {
        "http://" + (request.headers["Host"] ?? "nextcloud.sandbox.invalid")
    }

    /// The person grants the Login Flow v2 whose page is `loginURL` (what pressing "Grant access" does).
    ///
    /// - Returns: Whether such a flow was waiting.
    @discardableResult
    public func grantLogin(_ loginURL: URL) async -> Bool { await login.grant(id: loginURL.lastPathComponent) }

    /// Grants every Login Flow v2 still waiting (a person driving `tidings sandbox nextcloud`); returns how many.
    @discardableResult
    public func grantPendingLogins() async -> Int { await login.grantAll() }
}
