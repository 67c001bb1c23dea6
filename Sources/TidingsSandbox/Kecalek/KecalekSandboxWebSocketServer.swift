import Foundation
import TidingsCore
import TidingsKecalek
import TidingsNet
import TidingsSandboxKit

/// Serves a ``KecalekSandboxServer`` over a real loopback WebSocket, so the client's wire path
/// (handshake, masking, framing) is exercised end to end.
///
/// Clients authenticate with `Authorization: Bearer <token>` from ``KecalekSandboxServer/token(for:)``;
/// other upgrade requests are refused with 401. When the sandbox drops a connection (a fault, or
/// ``KecalekSandboxServer/dropAllConnections()``) the socket is cut without a close handshake.
///
/// For example:
///
/// ```swift
/// let endpoint = try KecalekSandboxWebSocketServer(server: sandbox)
/// let transport = KecalekWebSocketTransport(url: endpoint.url, token: sandbox.token(for: "alice"))
/// ```
public final class KecalekSandboxWebSocketServer: Sendable {
    /// The sandbox served.
    public let server: KecalekSandboxServer
    let socketServer: LoopbackWebSocketServer

    /// `ws://127.0.0.1:<port>/kecalek`.
    public var url: URL { URL(string: "ws://127.0.0.1:\(socketServer.port)/kecalek") ?? socketServer.url }

    /// The port bound on 127.0.0.1.
    public var port: Int { socketServer.port }

    /// Binds `port` on loopback (0, the default: a free one); `log` records each upgrade (the kit's
    /// request log).
    ///
    /// - Throws: `TransportError` when the port cannot be bound.
    public init(server: KecalekSandboxServer, port: Int = 0, log: SandboxRequestLog = SandboxRequestLog()) throws {
        self.server = server
        socketServer = try LoopbackWebSocketServer(
            port: port, log: log,
            authorize: { request in
                guard let token = Self.bearer(request.headers["authorization"]) else { return false }
                return server.user(forToken: token) != nil
            },
            handler: { request, connection in
                guard let token = Self.bearer(request.headers["authorization"]),
                    let userID = server.user(forToken: token)
                else { return }
                let channel = await server.openChannel(userID: userID)
                let outbound = Task {
                    do {
                        for try await frame in channel.inbound {
                            try await connection.send(text: String(decoding: frame, as: UTF8.self))
                        }
                    } catch {}
                    // The sandbox ended the session: cut the socket as a network failure would.
                    connection.abort()
                }
                do {
                    for try await message in connection.messages {
                        switch message {
                        case .text(let text): try await channel.send(Data(text.utf8))
                        case .binary(let bytes): try await channel.send(Data(bytes))
                        }
                    }
                } catch {}
                await channel.close()
                outbound.cancel()
            })
    }

    /// Stops accepting and closes every connection.
    public func stop() { socketServer.stop() }

    private static func bearer(_ header: String?) -> String? {
        guard let header, header.hasPrefix("Bearer ") else { return nil }
        return String(header.dropFirst("Bearer ".count))
    }
}
