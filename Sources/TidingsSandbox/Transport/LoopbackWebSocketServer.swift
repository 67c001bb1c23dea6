import Foundation
import TidingsCore
import TidingsNet

/// A minimal RFC 6455 WebSocket *server* on 127.0.0.1, for sandbox backends.
///
/// It accepts the HTTP/1.1 upgrade (checking `Upgrade`, `Sec-WebSocket-Version: 13` and answering
/// `Sec-WebSocket-Accept`), lets ``Handler`` accept or refuse each request by its headers, sends
/// unmasked frames, requires masked client frames, answers pings, echoes close frames, and
/// reassembles fragmented messages. It binds loopback only and is meant for tests, the demo and the
/// CLI, not for the internet.
///
/// For example:
///
/// ```swift
/// let server = try LoopbackWebSocketServer { request, connection in
///     for try await message in connection.messages { try await connection.send(text: "echo") }
/// }
/// print(server.url)   // ws://127.0.0.1:54321/
/// ```
public final class LoopbackWebSocketServer: Sendable {
    /// The request line and headers of one upgrade request.
    public struct UpgradeRequest: Sendable {
        /// The request target (`/ws?x=1`).
        public var target: String
        /// Header values by lower-cased name.
        public var headers: [String: String]
    }

    /// Decides whether to accept an upgrade (nil refuses it with 401), before the 101 is sent.
    public typealias Authorizer = @Sendable (UpgradeRequest) async -> Bool
    /// Serves one accepted connection; the connection closes when it returns.
    public typealias Handler = @Sendable (UpgradeRequest, LoopbackWebSocketConnection) async -> Void

    /// The bound port.
    public let port: Int
    /// `ws://127.0.0.1:<port>/`.
    public var url: URL { URL(string: "ws://127.0.0.1:\(port)/") ?? URL(fileURLWithPath: "/") }

    private let listener: TCPListener
    private let acceptTask: Task<Void, Never>

    /// Binds a free loopback port and starts accepting.
    ///
    /// - Throws: `TransportError` when the port cannot be bound.
    public init(authorize: @escaping Authorizer = { _ in true }, handler: @escaping Handler) throws {
        let listener = try TCPListener.bind(host: "127.0.0.1", port: 0)
        self.listener = listener
        self.port = listener.port
        acceptTask = Task {
            await withDiscardingTaskGroup { group in
                while !Task.isCancelled {
                    guard let connection = try? await listener.accept() else { break }
                    group.addTask {
                        await Self.serve(connection, authorize: authorize, handler: handler)
                    }
                }
                group.cancelAll()
            }
        }
    }

    /// Stops accepting and cancels every connection's handler.
    public func stop() {
        listener.close()
        acceptTask.cancel()
    }

    deinit { stop() }

    private static func serve(_ connection: TCPConnection, authorize: Authorizer, handler: Handler) async {
        defer { connection.close() }
        var buffer: [UInt8] = []
        let terminator: [UInt8] = Array("\r\n\r\n".utf8)
        var headerEnd: Int?
        while headerEnd == nil {
            guard let chunk = try? await connection.read(), !chunk.isEmpty, buffer.count < 64 * 1024 else { return }
            buffer += chunk
            headerEnd = buffer.firstRange(of: terminator)?.upperBound
        }
        guard let end = headerEnd else { return }
        let head = String(decoding: buffer[..<end], as: UTF8.self)
        let leftover = Array(buffer[end...])
        let lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.first?.split(separator: " ") ?? []
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            headers[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        guard requestLine.count >= 2, requestLine[0] == "GET",
            headers["upgrade"]?.lowercased() == "websocket", headers["sec-websocket-version"] == "13",
            let key = headers["sec-websocket-key"]
        else {
            try? await connection.write(Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".utf8))
            return
        }
        let request = UpgradeRequest(target: String(requestLine[1]), headers: headers)
        guard await authorize(request) else {
            try? await connection.write(Array("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n".utf8))
            return
        }
        let accept = Data(Insecure.SHA1.hash(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8)))
            .base64EncodedString()
        let response =
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: \(accept)\r\n\r\n"
        do { try await connection.write(Array(response.utf8)) } catch { return }

        let socket = LoopbackWebSocketConnection(connection)
        let reader = Task { await socket.readLoop(initial: leftover) }
        await handler(request, socket)
        await socket.close()
        reader.cancel()
    }
}

/// One accepted server-side WebSocket connection.
public final class LoopbackWebSocketConnection: Sendable {
    /// Text and binary messages from the client, in order; finishes when the client closes or vanishes.
    public let messages: AsyncThrowingStream<WebSocketMessage, any Error>
    private let continuation: AsyncThrowingStream<WebSocketMessage, any Error>.Continuation
    private let connection: TCPConnection
    private let writer: Writer

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

    init(_ connection: TCPConnection) {
        self.connection = connection
        self.writer = Writer(connection)
        (messages, continuation) = AsyncThrowingStream.makeStream()
    }

    /// Sends a text message as one unmasked frame.
    ///
    /// - Throws: `WebSocketError` once closed, `TransportError` when the socket fails.
    public func send(text: String) async throws {
        try await writer.write(WebSocketFrame(opcode: .text, payload: Array(text.utf8)))
    }

    /// Sends a close frame (if none was sent) and drops the socket; ``messages`` finishes.
    public func close(code: WebSocketCloseCode = .normalClosure) async {
        try? await writer.write(.close(code: code))
        connection.close()
        continuation.finish()
    }

    /// Drops the socket without a close handshake, as a network failure would.
    public func abort() {
        connection.close()
        continuation.finish(throwing: WebSocketError(.connectionLost, detail: "aborted by the server"))
    }

    func readLoop(initial: [UInt8]) async {
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
