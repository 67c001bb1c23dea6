import Foundation
import TidingsCore

/// The client side of the RFC 6455 §4 opening handshake: builds the upgrade request and checks the
/// server's answer.
struct WebSocketHandshake: Sendable {
    /// The GUID every server appends to the key before hashing (RFC 6455 §1.3).
    static let acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
    /// A handshake response longer than this is refused rather than buffered without bound.
    static let maximumResponseHeaderSize = 16 * 1024

    let key: String
    let request: [UInt8]
    let offeredSubprotocols: [String]

    /// The validated result of a successful handshake.
    struct Response: Sendable {
        var headers: [String: String]
        var subprotocol: String?
        /// Bytes after the header block: the first frames, already sent by the server.
        var leftover: [UInt8]
    }

    /// - Parameter key: a fixed `Sec-WebSocket-Key`, for tests and the fuzzer only; a fresh random
    ///   one otherwise.
    init(
        target: WebSocketTarget, headers: [(name: String, value: String)], subprotocols: [String],
        key fixedKey: String? = nil
    ) throws(WebSocketError) {
        if let fixedKey {
            key = fixedKey
        } else {
            var generator = SystemRandomNumberGenerator()
            let nonce = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
            key = Data(nonce).base64EncodedString()
        }
        offeredSubprotocols = subprotocols
        var lines = [
            "GET \(target.requestPath) HTTP/1.1",
            "Host: \(target.hostHeader)",
            "Upgrade: websocket",
            "Connection: Upgrade",
            "Sec-WebSocket-Key: \(key)",
            "Sec-WebSocket-Version: 13",
        ]
        // Bytes, not Characters, are checked: "\r\n" is a single Character equal to neither "\r" nor "\n".
        for subprotocol in subprotocols where !HTTPFieldSyntax.isValidName(subprotocol) {
            throw WebSocketError(.handshakeFailed, detail: "a subprotocol is not a valid token")
        }
        if !subprotocols.isEmpty { lines.append("Sec-WebSocket-Protocol: \(subprotocols.joined(separator: ", "))") }
        for header in headers {
            // A CR or LF would let a value smuggle extra headers into the request.
            guard HTTPFieldSyntax.isValidName(header.name), HTTPFieldSyntax.isValidValue(header.value) else {
                throw WebSocketError(.handshakeFailed, detail: "a header name or value has a forbidden character")
            }
            lines.append("\(header.name): \(header.value)")
        }
        request = Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }

    /// The `Sec-WebSocket-Accept` value a correct server answers for `key`.
    static func expectedAccept(for key: String) -> String {
        // SHA-1 only because RFC 6455 requires it; it protects nothing secret here.
        Data(TidingsCrypto.Insecure.SHA1.hash(Array((key + acceptGUID).utf8))).base64EncodedString()
    }

    /// Parses and validates the response head once `buffer` holds all of it.
    ///
    /// - Returns: `nil` while the header block is incomplete.
    /// - Throws: ``WebSocketError`` `handshakeFailed` (status, header or size problems).
    func parse(_ buffer: [UInt8]) throws(WebSocketError) -> Response? {
        guard let end = headerEnd(in: buffer) else {
            guard buffer.count <= Self.maximumResponseHeaderSize else {
                throw WebSocketError(.handshakeFailed, detail: "response header larger than 16 KiB")
            }
            return nil
        }
        let head = String(decoding: buffer[0..<end], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw WebSocketError(.handshakeFailed, detail: "malformed status line")
        }
        guard status == 101 else {
            throw WebSocketError(
                .handshakeFailed, detail: "server answered HTTP \(status) instead of 101", httpStatus: status)
        }
        var headers: [String: String] = [:]
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else {
                throw WebSocketError(.handshakeFailed, detail: "malformed header line", httpStatus: status)
            }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { "\($0), \(value)" } ?? value
        }
        guard headers["upgrade"]?.lowercased() == "websocket" else {
            throw WebSocketError(.handshakeFailed, detail: "missing Upgrade: websocket", httpStatus: status)
        }
        let connectionTokens = (headers["connection"] ?? "").lowercased().split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard connectionTokens.contains("upgrade") else {
            throw WebSocketError(.handshakeFailed, detail: "missing Connection: Upgrade", httpStatus: status)
        }
        guard headers["sec-websocket-accept"] == Self.expectedAccept(for: key) else {
            throw WebSocketError(.handshakeFailed, detail: "wrong Sec-WebSocket-Accept", httpStatus: status)
        }
        if let extensions = headers["sec-websocket-extensions"], !extensions.isEmpty {
            throw WebSocketError(
                .handshakeFailed, detail: "server chose an extension we did not offer", httpStatus: status)
        }
        let subprotocol = headers["sec-websocket-protocol"]
        if let subprotocol, !offeredSubprotocols.contains(subprotocol) {
            throw WebSocketError(
                .handshakeFailed, detail: "server chose a subprotocol we did not offer", httpStatus: status)
        }
        return Response(headers: headers, subprotocol: subprotocol, leftover: Array(buffer[(end + 4)...]))
    }

    private func headerEnd(in buffer: [UInt8]) -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4)
        where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            return index
        }
        return nil
    }
}

/// Where a `ws://` or `wss://` URL points.
struct WebSocketTarget: Sendable, Equatable {
    var secure: Bool
    var host: String
    var port: Int
    var requestPath: String

    init(url: URL) throws(WebSocketError) {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let scheme = components.scheme?.lowercased(), scheme == "ws" || scheme == "wss"
        else { throw WebSocketError(.invalidURL, detail: "not a ws:// or wss:// URL") }
        guard var host = components.host, !host.isEmpty else { throw WebSocketError(.invalidURL, detail: "no host") }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        secure = scheme == "wss"
        self.host = host
        port = components.port ?? (secure ? 443 : 80)
        guard (1...65535).contains(port) else { throw WebSocketError(.invalidURL, detail: "port out of range") }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        requestPath = components.percentEncodedQuery.map { "\(path)?\($0)" } ?? path
    }

    /// The `Host` header: the port only when it is not the scheme's default; IPv6 in brackets.
    var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (secure ? 443 : 80) ? name : "\(name):\(port)"
    }
}

/// Entry points for the libFuzzer targets in Fuzz/; not an API for apps.
@_spi(Fuzzing) public enum WebSocketHandshakeFuzzing {
    /// The `Sec-WebSocket-Key` the fuzzing handshake sends (RFC 6455's own example), so a seed
    /// response can carry the matching accept value `s3pPLMBiTxaQ9kYGzzhZRbK+xOo=`.
    public static let key = "dGhlIHNhbXBsZSBub25jZQ=="

    /// Parses `bytes` as the response to a handshake that offered `chat` and `superchat`, fed in two
    /// parts split at `split`, exactly as the client does while bytes arrive.
    ///
    /// - Returns: whether a complete, valid response was found.
    /// - Throws: ``WebSocketError`` for a response the client refuses.
    public static func parseResponse(_ bytes: [UInt8], split: Int) throws(WebSocketError) -> Bool {
        let target = try WebSocketTarget(url: URL(string: "ws://example.com/chat")!)
        let handshake = try WebSocketHandshake(
            target: target, headers: [], subprotocols: ["chat", "superchat"], key: key)
        let cut = min(max(split, 0), bytes.count)
        if let early = try handshake.parse(Array(bytes[..<cut])) {
            // The head ends at the same place in the whole input; the rest must be frame bytes, untouched.
            guard let whole = try handshake.parse(bytes), whole.leftover == early.leftover + bytes[cut...],
                whole.subprotocol == early.subprotocol
            else { fatalError("a longer input changed a complete handshake response") }
            return true
        }
        return try handshake.parse(bytes) != nil
    }
}

/// The server side of the opening handshake, for loopback sandbox servers: the same rule the client
/// checks, so the two can never disagree.
public enum WebSocketServerHandshake {
    /// The `Sec-WebSocket-Accept` value to answer for a request's `Sec-WebSocket-Key` (RFC 6455 §4.2.2).
    public static func acceptValue(for key: String) -> String { WebSocketHandshake.expectedAccept(for: key) }
}
