import Foundation
import TidingsNet

extension SandboxSocketIOServer {
    /// A connector for TidingsNet's `SocketIOClient` that reaches this server in process: polling
    /// requests go to ``SandboxHTTPServer/handle(_:)`` and the WebSocket is an in-memory pair, so the
    /// client's whole Engine.IO logic (handshake, probe, upgrade, heartbeat) runs with no socket.
    ///
    /// For example:
    ///
    /// ```swift
    /// let client = SocketIOClient(connector: server.inProcessConnector(transports: .pollingThenWebSocket))
    /// ```
    public func inProcessConnector(transports: EngineIOClient.Transports = .pollingThenWebSocket)
        -> any EngineIOConnector
    {
        let url = URL(string: "http://sandbox.invalid/") ?? URL(fileURLWithPath: "/")
        return EngineIOClientConnector(
            configuration: EngineIOClient.Configuration(url: url, transports: transports),
            http: InProcessPolling(server: http), webSocketFactory: InProcessWebSocketFactory(server: http))
    }
}

/// Polling requests answered by the server's in-process handler.
private struct InProcessPolling: EngineIOPollingHTTP {
    let server: SandboxHTTPServer

    func get(_ url: URL, headers: [String: String]) async throws -> [UInt8] {
        try await send("GET", url, headers: headers, body: [])
    }

    func post(_ url: URL, body: [UInt8], headers: [String: String]) async throws -> [UInt8] {
        try await send("POST", url, headers: headers, body: body)
    }

    private func send(_ method: String, _ url: URL, headers: [String: String], body: [UInt8]) async throws -> [UInt8] {
        var fields = HTTPHeaders()
        for (name, value) in headers { fields.add(name: name, value: value) }
        let target = url.path + (url.query.map { "?" + $0 } ?? "")
        let response = await server.handle(
            SandboxHTTPRequest(method: method, target: target, headers: fields, body: Data(body)))
        guard response.connectionFault == nil else { throw EngineIOError.transportFailed }
        guard response.status == 200 else { throw EngineIOError.httpStatus }
        return [UInt8](response.payload)
    }
}

/// WebSockets opened as in-memory pairs with the server's WebSocket handler.
private struct InProcessWebSocketFactory: EngineIOWebSocketFactory {
    let server: SandboxHTTPServer

    func connect(to url: URL, headers: [String: String]) async throws -> any EngineIOWebSocket {
        var fields = HTTPHeaders()
        for (name, value) in headers { fields.add(name: name, value: value) }
        let target = url.path + (url.query.map { "?" + $0 } ?? "")
        do {
            return InProcessEngineIOWebSocket(
                try await server.connectWebSocketInProcess(target: target, headers: fields))
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw EngineIOError.transportFailed
        }
    }
}

/// Adapts the in-memory client end to what the Engine.IO client reads and writes.
private struct InProcessEngineIOWebSocket: EngineIOWebSocket {
    let socket: SandboxInMemoryWebSocket
    let frames: AsyncThrowingStream<EngineIOFrame, any Error>

    init(_ socket: SandboxInMemoryWebSocket) {
        self.socket = socket
        let (frames, continuation) = AsyncThrowingStream<EngineIOFrame, any Error>.makeStream()
        self.frames = frames
        let task = Task {
            do {
                for try await message in socket.messages {
                    switch message {
                    case .text(let text): continuation.yield(.text(text))
                    case .binary(let bytes): continuation.yield(.binary(bytes))
                    }
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
    }

    func send(_ frame: EngineIOFrame) async throws {
        switch frame {
        case .text(let text): try socket.send(.text(text))
        case .binary(let bytes): try socket.send(.binary(bytes))
        }
    }

    func close() async { socket.close() }
}
