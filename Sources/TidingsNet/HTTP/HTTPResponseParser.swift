/// An incremental HTTP/1.1 response parser for the polling pool and ``HTTPClient``'s transport:
/// status line, headers, then a `Content-Length`, chunked or read-to-end body.
///
/// It is a pure function of the bytes appended so far (no I/O), so the fuzzer can drive it.
/// Guarantees: headers are bounded by ``maximumHeaderSize``, chunk-size lines by
/// ``maximumLineSize`` and bodies by the `maximumBodySize` given at creation, judged as the bytes
/// arrive (a declared `Content-Length` past it at once, other bodies as soon as a byte past it is
/// appended, so the body held never exceeds the limit by more than one read); every length from the
/// wire is checked without arithmetic that can trap; bad input throws ``EngineIOError``
/// `transportFailed` and never crashes.
@_spi(Fuzzing) public struct HTTPResponseParser: Sendable {
    /// A complete response.
    public struct Response: Sendable, Equatable {
        /// The status code.
        public var status: Int
        /// Whether the connection may carry another request.
        public var keepAlive: Bool
        /// The decoded body (chunked framing removed).
        public var body: [UInt8]
    }

    /// The largest header block accepted.
    public static let maximumHeaderSize = 64 * 1024
    /// The longest chunk-size or trailer line accepted.
    public static let maximumLineSize = 4096

    private enum State: Sendable {
        case head
        case fixed(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkEnd
        case trailers
        case toEnd
        case done
    }

    private let maximumBodySize: Int
    private let responseToHEAD: Bool
    private var buffer: [UInt8] = []
    private var start = 0
    private var state = State.head
    private var status = 0
    private var keepAlive = false
    private var body: [UInt8] = []
    /// Where the search for the end of the header block resumes, so a slow trickle stays linear.
    private var searchFrom = 0

    /// Whether any byte of the response arrived (a server closing before that closed an idle connection).
    public private(set) var hasReceivedBytes = false

    /// The header fields in order, repeated ones (`Set-Cookie`) kept apart; empty until the header block
    /// is complete. Values are trimmed of surrounding spaces; lines without a colon are left out.
    public private(set) var headerFields: [(name: String, value: String)] = []

    /// Decoded body bytes taken off the wire so far, including those of the piece that passed the limit
    /// (what a test of the limit measures: how far past it the reading went).
    public private(set) var bodyBytesReceived = 0

    /// A parser for one response whose body may be at most `maximumBodySize` bytes.
    ///
    /// - Parameter responseToHEAD: the response answers a HEAD request, so it has no body whatever its
    ///   `Content-Length` says (RFC 9110 §9.3.2).
    public init(maximumBodySize: Int, responseToHEAD: Bool = false) {
        self.maximumBodySize = max(0, maximumBodySize)
        self.responseToHEAD = responseToHEAD
    }

    /// Bytes read past the end of the response (the start of a pipelined one; normally none).
    public var leftover: ArraySlice<UInt8> { buffer[start...] }

    /// Adds bytes read from the connection.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        guard !bytes.isEmpty else { return }
        hasReceivedBytes = true
        if start > 0 && start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
            searchFrom = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The response, once complete; `nil` while more bytes are needed.
    ///
    /// - Throws: ``EngineIOError`` `transportFailed` for a malformed or oversized response.
    public mutating func next() throws(EngineIOError) -> Response? {
        while true {
            switch state {
            case .head:
                guard try parseHead() else { return nil }
            case .fixed(let remaining):
                // Taken piece by piece, so a large body is not held twice (buffer and body) until it ends.
                guard available > 0 || remaining == 0 else { return nil }
                let left = try takeBody(upTo: remaining)
                state = left == 0 ? .done : .fixed(remaining: left)
                if left > 0 { return nil }
            case .chunkSize:
                guard let line = try takeLine(limit: Self.maximumLineSize, what: "chunk header") else { return nil }
                let size = try Self.chunkSize(line)
                // A chunk larger than what the limit leaves is judged on its bytes as they arrive.
                state = size == 0 ? .trailers : .chunkData(remaining: size)
            case .chunkData(let remaining):
                guard available > 0 else { return nil }
                let left = try takeBody(upTo: remaining)
                state = left == 0 ? .chunkEnd : .chunkData(remaining: left)
                if left > 0 { return nil }
            case .chunkEnd:
                guard let line = try takeLine(limit: Self.maximumLineSize, what: "chunk end") else { return nil }
                guard line.isEmpty else { throw EngineIOError(.transportFailed, "invalid chunk end") }
                state = .chunkSize
            case .trailers:
                // Trailers end with an empty line; their content is not used.
                guard let line = try takeLine(limit: Self.maximumLineSize, what: "trailer") else { return nil }
                if line.isEmpty { state = .done }
            case .toEnd:
                bodyBytesReceived = available
                guard available <= maximumBodySize else { throw tooLarge() }
                return nil
            case .done:
                return Response(status: status, keepAlive: keepAlive, body: body)
            }
        }
    }

    /// The response when the connection has ended, for a body framed by the end of the connection.
    ///
    /// - Parameter cleanEnd: whether the end was authenticated (a TLS `close_notify`, or plain TCP);
    ///   without it a read-to-end body may have been cut short by an attacker, so it is refused.
    /// - Throws: ``EngineIOError`` `transportFailed` when the response is incomplete.
    public mutating func finish(cleanEnd: Bool = true) throws(EngineIOError) -> Response {
        if let response = try next() { return response }
        switch state {
        case .head:
            throw EngineIOError(.transportFailed, "the connection closed inside the response headers")
        case .toEnd:
            guard cleanEnd else {
                throw EngineIOError(.transportFailed, "the TLS connection ended without close_notify: body truncated")
            }
            body = Array(take(available))
            state = .done
            return Response(status: status, keepAlive: false, body: body)
        default:
            throw EngineIOError(.transportFailed, "the connection closed inside the response body")
        }
    }

    private var available: Int { buffer.count - start }

    /// The error for a body past the limit (``HTTPClient`` reports its text).
    private func tooLarge() -> EngineIOError {
        EngineIOError(.transportFailed, "the response body exceeds \(maximumBodySize) bytes")
    }

    /// Moves up to `remaining` available bytes into the body, refusing a piece that passes the limit;
    /// returns how many bytes of `remaining` are still to come.
    private mutating func takeBody(upTo remaining: Int) throws(EngineIOError) -> Int {
        let count = min(available, remaining)
        // Both sides are at most the limit or a buffer's size: neither the comparison nor the sum can trap.
        bodyBytesReceived += count
        guard count <= maximumBodySize - body.count else { throw tooLarge() }
        body += take(count)
        return remaining - count
    }

    private mutating func take(_ count: Int) -> ArraySlice<UInt8> {
        let bytes = buffer[start..<start + count]
        start += count
        return bytes
    }

    /// Takes one CRLF-terminated line, without the CRLF; `nil` if it is not complete yet.
    private mutating func takeLine(limit: Int, what: String) throws(EngineIOError) -> [UInt8]? {
        var index = start
        while index + 1 < buffer.count {
            if buffer[index] == 13 && buffer[index + 1] == 10 {
                let line = Array(buffer[start..<index])
                start = index + 2
                return line
            }
            index += 1
        }
        guard available < limit else { throw EngineIOError(.transportFailed, "\(what) too long") }
        return nil
    }

    /// A chunk size: hex digits only (no sign, no `0x`), optionally followed by `;extensions`.
    static func chunkSize(_ line: [UInt8]) throws(EngineIOError) -> Int {
        var size = 0
        var digits = 0
        for byte in line {
            let value: Int
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = Int(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = Int(byte - UInt8(ascii: "a")) + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = Int(byte - UInt8(ascii: "A")) + 10
            case UInt8(ascii: ";"), UInt8(ascii: " "), UInt8(ascii: "\t"):
                guard digits > 0 else { throw EngineIOError(.transportFailed, "invalid chunk size") }
                return size
            default:
                throw EngineIOError(.transportFailed, "invalid chunk size")
            }
            // 15 hex digits cannot overflow Int64; more is never a sensible chunk.
            guard digits < 15 else { throw EngineIOError(.transportFailed, "chunk size too large") }
            size = size * 16 + value
            digits += 1
        }
        guard digits > 0 else { throw EngineIOError(.transportFailed, "invalid chunk size") }
        return size
    }

    private mutating func parseHead() throws(EngineIOError) -> Bool {
        var index = max(searchFrom, start)
        var end: Int?
        while index + 3 < buffer.count {
            if buffer[index] == 13, buffer[index + 1] == 10, buffer[index + 2] == 13, buffer[index + 3] == 10 {
                end = index
                break
            }
            index += 1
        }
        guard let end else {
            searchFrom = max(start, buffer.count - 3)
            guard available <= Self.maximumHeaderSize else {
                throw EngineIOError(.transportFailed, "response headers exceed 64 KiB")
            }
            return false
        }
        guard end - start <= Self.maximumHeaderSize else {
            throw EngineIOError(.transportFailed, "response headers exceed 64 KiB")
        }
        let text = String(decoding: buffer[start..<end], as: UTF8.self)
        start = end + 4
        try applyHead(text)
        return true
    }

    private mutating func applyHead(_ text: String) throws(EngineIOError) {
        let lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusParts = lines.first?.split(separator: " ", maxSplits: 2) ?? []
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."),
            statusParts[1].utf8.count == 3, statusParts[1].utf8.allSatisfy({ (48...57).contains($0) }),
            let code = Int(statusParts[1]), (100...599).contains(code)
        else { throw EngineIOError(.transportFailed, "invalid HTTP status line") }
        status = code
        keepAlive = statusParts[0] == "HTTP/1.1"
        var contentLength: Int?
        var chunked = false
        var fields: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            fields.append((String(line[..<colon]), value))
            switch name {
            case "content-length":
                guard !value.isEmpty, value.utf8.allSatisfy({ (48...57).contains($0) }), let length = Int(value),
                    contentLength == nil || contentLength == length
                else { throw EngineIOError(.transportFailed, "invalid Content-Length") }
                contentLength = length
            case "transfer-encoding":
                chunked = value.lowercased().contains("chunked")
            case "connection":
                let token = value.lowercased()
                if token.contains("close") { keepAlive = false }
                if token.contains("keep-alive") { keepAlive = true }
            default:
                break
            }
        }
        headerFields = fields
        if (100..<200).contains(code) || code == 204 || code == 304 || responseToHEAD {
            // No body by definition (RFC 9112 §6.3).
            state = .done
        } else if chunked {
            state = .chunkSize
        } else if let contentLength {
            guard contentLength <= maximumBodySize else { throw tooLarge() }
            state = .fixed(remaining: contentLength)
        } else {
            keepAlive = false
            state = .toEnd
        }
    }
}
