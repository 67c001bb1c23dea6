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
        let (inbound, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        let pump = Task {
            do {
                for try await message in socket.messages {
                    switch message {
                    case .text(let text): continuation.yield(Data(text.utf8))
                    case .binary(let bytes): continuation.yield(Data(bytes))
                    }
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in pump.cancel() }
        return KecalekChannel(
            inbound: inbound,
            send: { frame in try socket.send(.text(String(decoding: frame, as: UTF8.self))) },
            close: {
                socket.close()
                pump.cancel()
            })
    }
}
