import Foundation

/// A minimal keep-alive HTTP/1.1 client for Engine.IO long-polling, over ``TCPConnection`` (and
/// ``TLSConnection`` for `https`).
///
/// Polling sends one long GET and one short POST at a time, again and again; reusing warm
/// connections (and nothing else: no redirects, no cookies, no caching) is what makes it fast.
/// Guarantees: a connection is reused only after a complete response that did not ask to close;
/// a request on a reused connection that the server had already closed is retried once on a new
/// one (a POST only when the connection was seen closed before any byte was sent, so a retried POST
/// can never deliver its packets twice); headers over 64 KiB or bodies over ``maximumBodySize`` fail
/// with ``EngineIOError/transportFailed`` instead of growing without bound. Opening a connection (TCP
/// and TLS handshake) is bounded by `connectTimeout`, and each response by ``responseTimeout``; both
/// fail with ``EngineIOError/timedOut``, and every wait ends with `CancellationError` when the task
/// is cancelled.
public final class EngineIOHTTPConnectionPool: EngineIOPollingHTTP, @unchecked Sendable {
    /// The largest response body accepted.
    public let maximumBodySize: Int
    /// The longest a request may wait for its complete response, once sent.
    ///
    /// A long-polling GET is held by the server for up to its `pingInterval` (25 s by default), so
    /// keep this above the server's `pingInterval` plus some slack.
    public let responseTimeout: Duration
    private let tls: TLSConfiguration
    private let connectTimeout: Duration
    private let clock: any Clock<Duration>
    // Guards `idle`, the only mutable state.
    private let lock = NSLock()
    private var idle: [String: [HTTPStream]] = [:]
    /// Request heads by URL and method: polling repeats the same two requests, and building a head
    /// (URL parsing included) costs more than sending it.
    private var heads: [String: [UInt8]] = [:]

    /// A pool with the given trust settings and limits.
    ///
    /// - Parameters:
    ///   - tls: trust settings for `https`.
    ///   - connectTimeout: the limit for opening one connection, measured on `clock`.
    ///   - maximumBodySize: the largest response body accepted.
    ///   - responseTimeout: the limit for one response, from sending the request to its last byte.
    ///   - clock: the clock for both timeouts.
    public init(
        tls: TLSConfiguration = TLSConfiguration(),
        connectTimeout: Duration = .seconds(20),
        maximumBodySize: Int = 64 * 1024 * 1024,
        responseTimeout: Duration = .seconds(90),
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        self.tls = tls
        self.connectTimeout = connectTimeout
        self.responseTimeout = responseTimeout
        self.maximumBodySize = maximumBodySize
        self.clock = clock
    }

    deinit {
        for stream in idle.values.joined() { stream.connection.close() }
    }

    /// Sends a GET and returns the body of a 200 response.
    public func get(_ url: URL, headers: [String: String]) async throws -> [UInt8] {
        try await request("GET", url, body: [], headers: headers)
    }

    /// Sends a POST with `body` and returns the body of a 200 response.
    public func post(_ url: URL, body: [UInt8], headers: [String: String]) async throws -> [UInt8] {
        try await request("POST", url, body: body, headers: headers)
    }

    private func request(_ method: String, _ url: URL, body: [UInt8], headers: [String: String]) async throws
        -> [UInt8]
    {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty
        else { throw EngineIOError(.transportFailed, "unsupported URL \(url.scheme ?? "")://\(url.host ?? "")") }
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        let key = "\(scheme)://\(host):\(port)"
        let message = requestBytes(method, url: url, host: host, port: port, body: body, headers: headers)

        var reused = takeIdle(key)
        while true {
            let stream: HTTPStream
            let isReused = reused != nil
            if let idleStream = reused {
                stream = idleStream
            } else {
                stream = try await open(scheme: scheme, host: host, port: port)
            }
            reused = nil
            do {
                let limit = maximumBodySize
                let response = try await withTaskCancellationHandler {
                    try await withTimeout(
                        responseTimeout, clock: clock,
                        timeoutError: { EngineIOError(.timedOut, "no complete response to \(method) in time") }
                    ) {
                        try await stream.exchange(message, maximumBodySize: limit)
                    }
                } onCancel: {
                    stream.connection.close()
                }
                if response.keepAlive { putIdle(key, stream) } else { stream.connection.close() }
                guard response.status == 200 else {
                    let text = String(decoding: response.body.prefix(200), as: UTF8.self)
                    throw EngineIOError(.httpStatus, "HTTP \(response.status) for \(method): \(text)")
                }
                return response.body
            } catch _ where Task.isCancelled {
                stream.connection.close()
                throw CancellationError()
            } catch let error as HTTPStream.StaleConnection where isReused && method != "POST" {
                // The server closed the idle connection before answering: a GET is safe to repeat on a
                // new one. A POST is not (its packets may have reached the server and would arrive
                // twice); `takeIdle` already dropped connections seen closed before it was sent.
                _ = error
                stream.connection.close()
                continue
            } catch let error as HTTPStream.StaleConnection {
                stream.connection.close()
                throw EngineIOError(.transportFailed, "\(method): \(error.reason)")
            } catch let error as EngineIOError {
                stream.connection.close()
                throw error
            } catch is CancellationError {
                stream.connection.close()
                throw CancellationError()
            } catch {
                stream.connection.close()
                if Task.isCancelled { throw CancellationError() }
                throw EngineIOError(.transportFailed, "\(method) failed: \(error)")
            }
        }
    }

    private func open(scheme: String, host: String, port: Int) async throws -> HTTPStream {
        let tls = self.tls
        do {
            // One limit for TCP and TLS together: a server that accepts and then never answers the
            // TLS handshake must not hold the session forever.
            return try await withTimeout(
                connectTimeout, clock: clock,
                timeoutError: { EngineIOError(.timedOut, "connecting to \(host):\(port) timed out") }
            ) {
                let tcp = try await TCPConnection.connect(host: host, port: port)
                if scheme == "https" {
                    #if canImport(COpenSSL)
                        do {
                            return HTTPStream(
                                try await TLSConnection.connect(over: tcp, host: host, configuration: tls))
                        } catch {
                            tcp.close()
                            throw error
                        }
                    #else
                        tcp.close()
                        throw EngineIOError(.transportFailed, "https polling needs OpenSSL on this platform")
                    #endif
                }
                return HTTPStream(tcp)
            }
        } catch let error as EngineIOError {
            throw error
        } catch _ where Task.isCancelled {
            throw CancellationError()
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw EngineIOError(.transportFailed, "connecting to \(host):\(port) failed: \(error)")
        }
    }

    /// Whether the pool holds idle connections to `url`'s origin and all of them look closed (tests
    /// wait for this before checking that a closed connection is not used).
    func idleConnectionsLookClosed(for url: URL) -> Bool {
        let scheme = url.scheme?.lowercased() ?? ""
        let key = "\(scheme)://\(url.host ?? ""):\(url.port ?? (scheme == "https" ? 443 : 80))"
        return lock.withLock {
            guard let streams = idle[key], !streams.isEmpty else { return false }
            return streams.allSatisfy(\.isUnusableWhileIdle)
        }
    }

    /// The most recently used idle connection to `key` that still looks usable; the others found on
    /// the way are closed.
    private func takeIdle(_ key: String) -> HTTPStream? {
        while let stream = lock.withLock({ idle[key]?.popLast() }) {
            guard stream.isUnusableWhileIdle else { return stream }
            stream.connection.close()
        }
        return nil
    }

    private func putIdle(_ key: String, _ stream: HTTPStream) {
        let extra: HTTPStream? = lock.withLock {
            var streams = idle[key, default: []]
            // Polling needs two connections; a few spare ones cover reconnects.
            guard streams.count < 4 else { return stream }
            streams.append(stream)
            idle[key] = streams
            return nil
        }
        extra?.connection.close()
    }

    private func requestBytes(
        _ method: String, url: URL, host: String, port: Int, body: [UInt8], headers: [String: String]
    ) -> [UInt8] {
        var key = method + " " + url.absoluteString
        if !headers.isEmpty {
            for (name, value) in headers.sorted(by: { $0.key < $1.key }) { key += "\n\(name): \(value)" }
        }
        var bytes: [UInt8]
        if let head = lock.withLock({ heads[key] }) {
            bytes = head
        } else {
            bytes = Self.requestHead(method, url: url, host: host, port: port, headers: headers)
            lock.withLock {
                if heads.count >= 8 { heads.removeAll() }
                heads[key] = bytes
            }
        }
        if method == "POST" {
            bytes.append(contentsOf: "Content-Length: \(body.count)\r\n\r\n".utf8)
            bytes.append(contentsOf: body)
        } else {
            bytes.append(contentsOf: [13, 10])
        }
        return bytes
    }

    /// The request line and fixed headers, without the final empty line (and without the
    /// per-request `Content-Length`).
    static func requestHead(_ method: String, url: URL, host: String, port: Int, headers: [String: String]) -> [UInt8] {
        // `URL.path` drops a trailing slash, which the Engine.IO path needs.
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        var target = components?.percentEncodedPath ?? "/"
        if target.isEmpty { target = "/" }
        if let query = components?.percentEncodedQuery { target += "?" + query }
        var head = "\(method) \(target) HTTP/1.1\r\nHost: \(host):\(port)\r\nAccept: */*\r\n"
        if method == "POST" {
            head += "Content-Type: text/plain; charset=UTF-8\r\n"
        }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            // A header with a line break would smuggle a second header or request.
            guard !name.contains(where: \.isNewline), !value.contains(where: \.isNewline) else { continue }
            head += "\(name): \(value)\r\n"
        }
        return Array(head.utf8)
    }
}

/// One HTTP/1.1 connection with the bytes read past the last response.
final class HTTPStream: @unchecked Sendable {
    /// The connection ended before a response byte arrived: the server closed an idle connection.
    struct StaleConnection: Error {
        let reason: String
    }

    struct Response {
        var status: Int
        var keepAlive: Bool
        var body: [UInt8]
    }

    let connection: any ByteStream
    // Only one request runs on a stream at a time (it is out of the pool while in use).
    private var buffer: [UInt8] = []
    private var start = 0

    init(_ connection: any ByteStream) {
        self.connection = connection
    }

    /// Whether the idle connection was closed by the server (or got unexpected bytes); only plain
    /// TCP can be checked without a read, so a TLS connection always looks usable.
    var isUnusableWhileIdle: Bool {
        available > 0 || (connection as? TCPConnection)?.isUnusableWhileIdle() == true
    }

    func exchange(_ request: [UInt8], maximumBodySize: Int) async throws -> Response {
        do {
            try await connection.write(request)
        } catch {
            throw StaleConnection(reason: "write failed: \(error)")
        }
        let head = try await readHead()
        var body: [UInt8]
        if head.chunked {
            body = try await readChunked(maximumBodySize: maximumBodySize)
        } else if let length = head.contentLength {
            guard length <= maximumBodySize else {
                throw EngineIOError(.transportFailed, "response body of \(length) bytes is too large")
            }
            body = try await readExactly(length)
        } else {
            body = try await readToEnd(maximumBodySize: maximumBodySize)
            return Response(status: head.status, keepAlive: false, body: body)
        }
        return Response(status: head.status, keepAlive: head.keepAlive, body: body)
    }

    private var available: Int { buffer.count - start }

    private func fill() async throws -> Bool {
        if start > 0 && start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        }
        let chunk = try await connection.read()
        if chunk.isEmpty { return false }
        buffer.append(contentsOf: chunk)
        return true
    }

    private func take(_ count: Int) -> [UInt8] {
        let bytes = Array(buffer[start..<start + count])
        start += count
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        }
        return bytes
    }

    struct Head {
        var status: Int
        var contentLength: Int?
        var chunked: Bool
        var keepAlive: Bool
    }

    private func readHead() async throws -> Head {
        var searchFrom = start
        var sawByte = available > 0
        while true {
            if let end = findHeaderEnd(from: searchFrom) {
                let text = String(decoding: buffer[start..<end], as: UTF8.self)
                start = end + 4
                return try parseHead(text)
            }
            searchFrom = max(start, buffer.count - 3)
            guard available < 64 * 1024 else {
                throw EngineIOError(.transportFailed, "response headers exceed 64 KiB")
            }
            let more: Bool
            do {
                more = try await fill()
            } catch {
                if !sawByte { throw StaleConnection(reason: "read failed: \(error)") }
                throw error
            }
            guard more else {
                if !sawByte { throw StaleConnection(reason: "the server closed the connection") }
                throw EngineIOError(.transportFailed, "the connection closed inside the response headers")
            }
            sawByte = true
        }
    }

    private func findHeaderEnd(from index: Int) -> Int? {
        var index = max(index, start)
        while index + 3 < buffer.count {
            if buffer[index] == 13, buffer[index + 1] == 10, buffer[index + 2] == 13, buffer[index + 3] == 10 {
                return index
            }
            index += 1
        }
        return nil
    }

    private func parseHead(_ text: String) throws -> Head {
        let lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusParts = lines.first?.split(separator: " ", maxSplits: 2) ?? []
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else {
            throw EngineIOError(.transportFailed, "invalid HTTP status line")
        }
        var head = Head(status: status, contentLength: nil, chunked: false, keepAlive: statusParts[0] == "HTTP/1.1")
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            switch name {
            case "content-length":
                guard let length = Int(value), length >= 0 else {
                    throw EngineIOError(.transportFailed, "invalid Content-Length")
                }
                head.contentLength = length
            case "transfer-encoding":
                head.chunked = value.lowercased().contains("chunked")
            case "connection":
                let token = value.lowercased()
                if token.contains("close") { head.keepAlive = false }
                if token.contains("keep-alive") { head.keepAlive = true }
            default:
                break
            }
        }
        return head
    }

    private func readExactly(_ count: Int) async throws -> [UInt8] {
        while available < count {
            guard try await fill() else {
                throw EngineIOError(.transportFailed, "the connection closed inside the response body")
            }
        }
        return take(count)
    }

    private func readLine() async throws -> String {
        while true {
            var index = start
            while index + 1 < buffer.count {
                if buffer[index] == 13, buffer[index + 1] == 10 {
                    let line = String(decoding: buffer[start..<index], as: UTF8.self)
                    start = index + 2
                    return line
                }
                index += 1
            }
            guard available < 4096 else { throw EngineIOError(.transportFailed, "chunk header too long") }
            guard try await fill() else {
                throw EngineIOError(.transportFailed, "the connection closed inside a chunk header")
            }
        }
    }

    private func readChunked(maximumBodySize: Int) async throws -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let line = try await readLine()
            let sizeText = line.split(separator: ";").first.map(String.init) ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16), size >= 0 else {
                throw EngineIOError(.transportFailed, "invalid chunk size")
            }
            if size == 0 {
                // Trailers end with an empty line.
                while try await readLine() != "" {}
                return body
            }
            // Compared as a difference: `body.count + size` could overflow for a size near Int.max.
            guard size <= maximumBodySize - body.count else {
                throw EngineIOError(.transportFailed, "chunked response body is too large")
            }
            body += try await readExactly(size)
            guard try await readLine() == "" else { throw EngineIOError(.transportFailed, "invalid chunk end") }
        }
    }

    private func readToEnd(maximumBodySize: Int) async throws -> [UInt8] {
        while try await fill() {
            guard available <= maximumBodySize else {
                throw EngineIOError(.transportFailed, "response body is too large")
            }
        }
        return take(available)
    }
}
