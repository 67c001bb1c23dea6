import Foundation
import TidingsCore
import TidingsNet

/// One accepted server-side WebSocket connection: over a real socket (RFC 6455 frames, server role) or
/// in memory (whole messages handed to a ``SandboxInMemoryWebSocket``, no framing), behind one API so a
/// sandbox handler never knows which.
public final class LoopbackWebSocketConnection: Sendable {
    /// Text and binary messages from the client, in order; finishes when the client closes or vanishes.
    public let messages: AsyncThrowingStream<WebSocketMessage, any Error>
    let continuation: AsyncThrowingStream<WebSocketMessage, any Error>.Continuation
    private let backing: Backing

    private enum Backing: Sendable {
        case socket(TCPConnection, Writer)
        case memory(InMemoryPeer)
    }

    /// Serializes writes so frames never interleave.
    private actor Writer {
        let connection: TCPConnection
        var closed = false
        init(_ connection: TCPConnection) { self.connection = connection }

        func write(_ frame: WebSocketFrame) async throws {
            guard !closed else { throw WebSocketError(.closed, detail: "connection closed") }
            if frame.opcode == .close { closed = true }
            try await connection.write(WebSocketFrameEncoder(role: .server).encode(frame))
        }
    }

    /// The in-memory client's side: what the server sends goes to its stream.
    final class InMemoryPeer: Sendable {
        let toClient: AsyncThrowingStream<WebSocketMessage, any Error>.Continuation
        let state = LockedState<(closed: Bool, code: WebSocketCloseCode?)>((false, nil))
        init(_ toClient: AsyncThrowingStream<WebSocketMessage, any Error>.Continuation) { self.toClient = toClient }
    }

    init(_ connection: TCPConnection) {
        backing = .socket(connection, Writer(connection))
        (messages, continuation) = AsyncThrowingStream.makeStream()
    }

    init(inMemory peer: InMemoryPeer) {
        backing = .memory(peer)
        (messages, continuation) = AsyncThrowingStream.makeStream()
    }

    /// Sends a text message (over a socket: one unmasked frame).
    ///
    /// - Throws: `TidingsNet/WebSocketError` once closed, `TidingsNet/TransportError` when the socket fails.
    public func send(text: String) async throws { try await send(.text(text)) }

    /// Sends a binary message (over a socket: one unmasked frame).
    ///
    /// - Throws: `TidingsNet/WebSocketError` once closed, `TidingsNet/TransportError` when the socket fails.
    public func send(binary: [UInt8]) async throws { try await send(.binary(binary)) }

    private func send(_ message: WebSocketMessage) async throws {
        switch backing {
        case .socket(_, let writer):
            switch message {
            case .text(let text): try await writer.write(WebSocketFrame(opcode: .text, payload: Array(text.utf8)))
            case .binary(let bytes): try await writer.write(WebSocketFrame(opcode: .binary, payload: bytes))
            }
        case .memory(let peer):
            guard !peer.state.withLock({ $0.closed }) else {
                throw WebSocketError(.closed, detail: "connection closed")
            }
            peer.toClient.yield(message)
        }
    }

    /// Sends a close frame (if none was sent) and drops the socket; ``messages`` finishes.
    public func close(code: WebSocketCloseCode = .normalClosure) async {
        switch backing {
        case .socket(let connection, let writer):
            try? await writer.write(.close(code: code))
            connection.close()
        case .memory(let peer):
            let first = peer.state.withLock { state in
                defer { state.closed = true }
                if !state.closed { state.code = code }
                return !state.closed
            }
            if first { peer.toClient.finish() }
        }
        continuation.finish()
    }

    /// Drops the socket without a close handshake, as a network failure would.
    public func abort() {
        switch backing {
        case .socket(let connection, _):
            connection.close()
        case .memory(let peer):
            peer.state.withLock { $0.closed = true }
            peer.toClient.finish(throwing: WebSocketError(.connectionLost, detail: "aborted by the server"))
        }
        continuation.finish(throwing: WebSocketError(.connectionLost, detail: "aborted by the server"))
    }

    func readLoop(initial: [UInt8]) async {
        guard case .socket(let connection, let writer) = backing else { return }
        var decoder = WebSocketFrameDecoder(role: .server)
        var assembler = WebSocketMessageAssembler()
        decoder.append(initial)
        do {
            while true {
                while let frame = try decoder.nextFrame() {
                    switch frame.opcode {
                    case .ping:
                        try await writer.write(WebSocketFrame(opcode: .pong, payload: frame.payload))
                    case .pong:
                        break
                    case .close:
                        try? await writer.write(WebSocketFrame(opcode: .close, payload: frame.payload))
                        connection.close()
                        continuation.finish()
                        return
                    default:
                        if let message = try assembler.push(frame) { continuation.yield(message) }
                    }
                }
                let bytes = try await connection.read()
                if bytes.isEmpty {
                    continuation.finish()
                    return
                }
                decoder.append(bytes)
            }
        } catch let error as WebSocketError {
            try? await writer.write(.close(code: error.closeCode))
            connection.close()
            continuation.finish(throwing: error)
        } catch {
            connection.close()
            continuation.finish(throwing: error)
        }
    }
}

/// The client end of an in-memory WebSocket to a kit server: whole messages, in order, no socket.
///
/// Guarantees: what one side sends the other receives in order; ``close()`` finishes the server's
/// ``LoopbackWebSocketConnection/messages``; a server close finishes ``messages`` and leaves its code in
/// ``closeCode``; a server abort makes ``messages`` throw `TidingsNet/WebSocketError` `connectionLost`.
public final class SandboxInMemoryWebSocket: Sendable {
    /// What the server sent, in order.
    public let messages: AsyncThrowingStream<WebSocketMessage, any Error>
    let server: LoopbackWebSocketConnection
    let peer: LoopbackWebSocketConnection.InMemoryPeer

    /// A connected pair: this client end and the server's connection.
    static func pair() -> (client: SandboxInMemoryWebSocket, server: LoopbackWebSocketConnection) {
        let (messages, toClient) = AsyncThrowingStream<WebSocketMessage, any Error>.makeStream()
        let peer = LoopbackWebSocketConnection.InMemoryPeer(toClient)
        let server = LoopbackWebSocketConnection(inMemory: peer)
        return (SandboxInMemoryWebSocket(messages: messages, server: server, peer: peer), server)
    }

    private init(
        messages: AsyncThrowingStream<WebSocketMessage, any Error>, server: LoopbackWebSocketConnection,
        peer: LoopbackWebSocketConnection.InMemoryPeer
    ) {
        self.messages = messages
        self.server = server
        self.peer = peer
    }

    /// The code of the server's close, once it closed.
    public var closeCode: WebSocketCloseCode? { peer.state.withLock { $0.code } }

    /// Sends a message to the server.
    ///
    /// - Throws: `TidingsNet/WebSocketError` `closed` once either side closed.
    public func send(_ message: WebSocketMessage) throws {
        guard !peer.state.withLock({ $0.closed }) else { throw WebSocketError(.closed, detail: "connection closed") }
        server.continuation.yield(message)
    }

    /// Closes both directions, as a client close handshake would.
    public func close() {
        peer.state.withLock { $0.closed = true }
        peer.toClient.finish()
        server.continuation.finish()
    }
}
