import Foundation
import TidingsCore
import TidingsNet
import TidingsOpenMates
import TidingsSandboxKit

/// Serves an ``OpenMatesSandboxServer`` at `/v1/ws?sessionId=…` over a real loopback WebSocket and, through
/// the kit's in-memory pair, in process — the same authorization, faults, request log and handler.
///
/// A client authenticates as the real server's handler reads it: the cookie `auth_refresh_token=<token>` or
/// the query parameter `token=<token>` (`/v1/ws?sessionId=…&token=…`). Anything else is refused at the
/// handshake with 403, as the real server refuses it — an `Authorization` header included, which the real
/// server does not read — as is an upgrade without a `sessionId`. When the sandbox drops a connection the
/// socket is cut without a close handshake. Given a prefetch endpoint, the port also answers its
/// `POST /v1/sync/offline-prefetch`, so the WebSocket's origin is the API's origin, as on the real server.
///
/// For example:
/// ```swift
/// let endpoint = try OpenMatesSandboxWebSocketServer(server: sandbox)
/// let transport = try OpenMatesWebSocketTransport(
///     origin: endpoint.origin, sessionID: UUID().uuidString, credential: .token(sandbox.token))
/// ```
public final class OpenMatesSandboxWebSocketServer: Sendable {
    /// The sandbox served.
    public let server: OpenMatesSandboxServer
    let socketServer: LoopbackWebSocketServer

    /// `ws://127.0.0.1:<port>`: the origin a client appends `/v1/ws?sessionId=…` to.
    public var origin: URL { URL(string: "ws://127.0.0.1:\(socketServer.port)") ?? socketServer.url }
    /// The port bound on 127.0.0.1.
    public var port: Int { socketServer.port }
    /// The fault switches applied to upgrades.
    public var faults: SandboxFaultSwitch { socketServer.faults }
    /// Every upgrade, with its bytes.
    public var log: SandboxRequestLog { socketServer.log }

    /// The status of a refused login: the real server's (seeds README: "an HTTP 403 at the handshake").
    public static let refusedLoginStatus = 403

    /// Binds `port` on loopback (0: a free one); `prefetch`, when given, is served on the same port (its own
    /// faults and log).
    ///
    /// - Throws: `TransportError` when the port cannot be bound.
    public init(
        server: OpenMatesSandboxServer, port: Int = 0, faults: SandboxFaultSwitch = SandboxFaultSwitch(),
        log: SandboxRequestLog = SandboxRequestLog(), prefetch: OpenMatesSandboxPrefetchEndpoint? = nil
    ) throws {
        self.server = server
        let token = server.token
        socketServer = try LoopbackWebSocketServer(
            port: port, faults: faults, log: log, http: prefetch?.http, refusal: Self.refusedLoginStatus,
            authorize: { request in Self.authorized(request, token: token) },
            handler: { request, connection in
                guard Self.authorized(request, token: token) else { return }
                let channel = await server.openChannel()
                let outbound = Task {
                    do {
                        for try await frame in channel.inbound { try await connection.send(text: frame) }
                    } catch {}
                    connection.abort()
                }
                do {
                    for try await message in connection.messages {
                        switch message {
                        case .text(let text): try await channel.send(text)
                        case .binary(let bytes): try await channel.send(String(decoding: bytes, as: UTF8.self))
                        }
                    }
                } catch {}
                await channel.close()
                outbound.cancel()
            })
    }

    /// Stops accepting and closes every connection.
    public func stop() { socketServer.stop() }

    /// A transport reaching this endpoint in process (no socket), with `token` in the query as
    /// `OpenMatesWebSocketTransport` sends it, and the given headers (a `Cookie`, say).
    public func inProcessTransport(
        sessionID: String = "sandbox-session", token: String? = nil, headers: [String: String] = [:]
    ) -> any OpenMatesTransport {
        var query = [URLQueryItem(name: "sessionId", value: sessionID)]
        if let token { query.append(URLQueryItem(name: "token", value: token)) }
        var components = URLComponents()
        components.queryItems = query
        let target = "/v1/ws?" + (components.percentEncodedQuery ?? "")
        return OpenMatesKitInProcessTransport(server: socketServer, target: target, headers: headers)
    }

    static func authorized(_ request: LoopbackWebSocketServer.UpgradeRequest, token: String) -> Bool {
        guard request.target.hasPrefix("/v1/ws?"),
            let query = URLComponents(string: request.target)?.queryItems,
            query.contains(where: { $0.name == "sessionId" && !($0.value ?? "").isEmpty })
        else { return false }
        if query.contains(where: { $0.name == "token" && $0.value == token }) { return true }
        let cookies = (request.headers["cookie"] ?? "").split(separator: ";").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        return cookies.contains("auth_refresh_token=\(token)")
    }
}

/// OpenMates frames over a ``SandboxInMemoryWebSocket``.
private struct OpenMatesKitInProcessTransport: OpenMatesTransport {
    let server: LoopbackWebSocketServer
    let target: String
    let headers: [String: String]

    func connect() async throws -> OpenMatesChannel {
        let socket = try await server.connectInProcess(target: target, headers: headers)
        return OpenMatesChannel.overWebSocket(
            messages: socket.messages, sendText: { text in try socket.send(.text(text)) }, close: { socket.close() })
    }
}
