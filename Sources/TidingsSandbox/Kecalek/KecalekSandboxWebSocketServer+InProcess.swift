import Foundation
import TidingsKecalek
import TidingsNet
import TidingsSandboxKit

extension KecalekSandboxWebSocketServer {
    /// A transport that reaches this endpoint through the kit's in-memory WebSocket pair: the same
    /// bearer check, fault switches, request log and handler as the loopback socket, with no socket.
    ///
    /// For example:
    ///
    /// ```swift
    /// let transport = endpoint.inProcessTransport(token: sandbox.token(for: "alice"))
    /// ```
    public func inProcessTransport(token: String?) -> any KecalekTransport {
        KecalekKitInProcessTransport(server: socketServer, token: token)
    }
}

/// Kecalek frames over a ``SandboxInMemoryWebSocket``.
private struct KecalekKitInProcessTransport: KecalekTransport {
    let server: LoopbackWebSocketServer
    let token: String?

    func connect() async throws -> KecalekChannel {
        let headers = token.map { ["Authorization": "Bearer \($0)"] } ?? [:]
        let socket = try await server.connectInProcess(target: "/kecalek", headers: headers)
        return KecalekChannel.overWebSocket(
            messages: socket.messages, sendText: { text in try socket.send(.text(text)) }, close: { socket.close() })
    }
}
