import Foundation
import TidingsCore
import TidingsMastodon
import TidingsNet
import TidingsSandboxKit

/// Reaches a sandbox's `SandboxHTTPServer` in process, with no socket: each `HTTPRequest` is answered by
/// the server's `handle` (faults and request log included), so a `MastodonAPIClient` runs unchanged
/// against it.
public struct MastodonSandboxTransport: MastodonTransport {
    private let server: SandboxHTTPServer

    /// A transport to `server`.
    public init(server: SandboxHTTPServer) { self.server = server }

    /// The server's answer; a dropped or unanswered request is a transport error, as on a socket.
    public func response(for request: HTTPRequest) async throws -> HTTPResponse {
        var target = request.url.path
        if let query = request.url.query { target += "?\(query)" }
        var headers = request.headers
        if let token = request.bearerToken { headers.add(name: "Authorization", value: "Bearer \(token)") }
        if request.body != nil, headers["Content-Type"] == nil {
            headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        }
        let answer = await server.handle(
            SandboxHTTPRequest(
                method: request.method.rawValue, target: target, headers: headers, body: request.body ?? Data()))
        if answer.connectionFault != nil || answer.status == 0 {
            throw MastodonSandboxDropped.dropped
        }
        return HTTPResponse(status: answer.status, headers: answer.headers, body: answer.payload, url: request.url)
    }
}

/// The sandbox dropped or never answered an in-process request (a fault switch), as a socket would.
public struct MastodonSandboxDropped: TidingsError {
    /// The one kind; not public, so a kind added later breaks no caller.
    enum Code: String, Sendable { case dropped }

    /// The kind (always ``dropped``).
    public var kind: TidingsErrorKind { TidingsErrorKind(Code.dropped) }

    /// The connection was cut or never answered.
    public static let dropped = MastodonSandboxDropped()

    /// `MastodonSandboxDropped.dropped`.
    public var description: String { "MastodonSandboxDropped.dropped" }
}
