import Foundation
import Testing
import TidingsCore

@testable import TidingsNet

/// A scripted WebSocket server on loopback, built from our own listener and frame codec, for
/// tests that need exact control over what the server sends (bad frames, silence, odd handshakes).
///
/// Each test drives the one accepted connection step by step: read the request, answer it, read
/// and write frames. Nothing here sleeps.
final class LoopbackWebSocketServer: Sendable {
    let listener: TCPListener
    var port: Int { listener.port }
    var url: URL { URL(string: "ws://127.0.0.1:\(listener.port)/socket")! }

    init() throws {
        listener = try TCPListener.bind(host: "127.0.0.1", port: 0)
    }

    deinit { listener.close() }

    /// Accepts one client and reads its upgrade request.
    func accept() async throws -> ServerSide {
        let connection = try await listener.accept()
        let side = ServerSide(connection: connection)
        try await side.readRequest()
        return side
    }
}

/// The server end of one accepted test connection.
final class ServerSide: Sendable {
    let connection: TCPConnection
    private struct State {
        var requestHead = ""
        var decoder = WebSocketFrameDecoder(role: .server)
        var buffered: [UInt8] = []

        /// Adds bytes of the request; true once its head is complete (what follows it goes to the decoder).
        mutating func appendRequest(_ bytes: [UInt8]) -> Bool {
            buffered += bytes
            let text = String(decoding: buffered, as: UTF8.self)
            guard let range = text.range(of: "\r\n\r\n") else { return false }
            requestHead = String(text[..<range.lowerBound])
            let consumed = text[..<range.upperBound].utf8.count
            decoder.append(buffered[consumed...])
            buffered = []
            return true
        }
    }
    private let state = LockedState(State())
    private let encoder = WebSocketFrameEncoder(role: .server)

    init(connection: TCPConnection) { self.connection = connection }

    /// The upgrade request up to its blank line, once ``readRequest()`` returned.
    var requestHead: String { state.withLock { locked in locked.requestHead } }

    func readRequest() async throws {
        while true {
            let bytes = try await connection.read()
            if bytes.isEmpty { throw TestFailure("client closed before its request was complete") }
            if state.withLock({ locked in locked.appendRequest(bytes) }) { return }
        }
    }

    /// The value of a request header (case-insensitive name).
    func header(_ name: String) -> String? {
        for line in requestHead.components(separatedBy: "\r\n").dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == name.lowercased() {
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    /// Answers the upgrade correctly (or with `accept` overridden), plus `extra` raw bytes.
    func acceptUpgrade(accept: String? = nil, extraHeaders: String = "", extra: [UInt8] = []) async throws {
        let key = header("Sec-WebSocket-Key") ?? ""
        let value = accept ?? WebSocketHandshake.expectedAccept(for: key)
        let response =
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: \(value)\r\n\(extraHeaders)\r\n"
        try await connection.write(Array(response.utf8) + extra)
    }

    func send(_ frame: WebSocketFrame) async throws {
        try await connection.write(encoder.encode(frame))
    }

    func sendRaw(_ bytes: [UInt8]) async throws { try await connection.write(bytes) }

    /// Reads the next frame from the client (nil at end of stream).
    func nextFrame() async throws -> WebSocketFrame? {
        while true {
            if let frame = try state.withLock({ locked in try locked.decoder.nextFrame() }) { return frame }
            let bytes = try await connection.read()
            if bytes.isEmpty { return nil }
            state.withLock { locked in locked.decoder.append(bytes) }
        }
    }

    /// Reads until end of stream; true if the client closed the TCP connection.
    func readUntilEOF() async throws -> Bool {
        while try await nextFrame() != nil {}
        return true
    }

    func close() { connection.close() }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
