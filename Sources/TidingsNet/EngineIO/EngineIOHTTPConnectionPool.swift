import Foundation
import TidingsCore

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
public final class EngineIOHTTPConnectionPool: EngineIOPollingHTTP, Sendable {
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
    private struct State {
        var idle: [String: [HTTPStream]] = [:]
        /// Request heads by URL and method: polling repeats the same two requests, and building a head
        /// (URL parsing included) costs more than sending it.
        var heads: [String: [UInt8]] = [:]
    }
    private let state = LockedState(State())

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
        for stream in state.withLock({ $0.idle.values.joined() }) { stream.connection.close() }
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
        let message = try requestBytes(method, url: url, host: host, port: port, body: body, headers: headers)

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
                    #if TIDINGS_OPENSSL
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
        return state.withLock { locked in
            guard let streams = locked.idle[key], !streams.isEmpty else { return false }
            return streams.allSatisfy(\.isUnusableWhileIdle)
        }
    }

    /// The most recently used idle connection to `key` that still looks usable; the others found on
    /// the way are closed.
    private func takeIdle(_ key: String) -> HTTPStream? {
        while let stream = state.withLock({ locked in locked.idle[key]?.popLast() }) {
            guard stream.isUnusableWhileIdle else { return stream }
            stream.connection.close()
        }
        return nil
    }

    private func putIdle(_ key: String, _ stream: HTTPStream) {
        let extra: HTTPStream? = state.withLock { locked in
            var streams = locked.idle[key, default: []]
            // Polling needs two connections; a few spare ones cover reconnects.
            guard streams.count < 4 else { return stream }
            streams.append(stream)
            locked.idle[key] = streams
            return nil
        }
        extra?.connection.close()
    }

    private func requestBytes(
        _ method: String, url: URL, host: String, port: Int, body: [UInt8], headers: [String: String]
    ) throws -> [UInt8] {
        var key = method + " " + url.absoluteString
        if !headers.isEmpty {
            for (name, value) in headers.sorted(by: { $0.key < $1.key }) { key += "\n\(name): \(value)" }
        }
        var bytes: [UInt8]
        if let head = state.withLock({ locked in locked.heads[key] }) {
            bytes = head
        } else {
            bytes = try Self.requestHead(method, url: url, host: host, port: port, headers: headers)
            state.withLock { locked in
                if locked.heads.count >= 8 { locked.heads.removeAll() }
                locked.heads[key] = bytes
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
    static func requestHead(_ method: String, url: URL, host: String, port: Int, headers: [String: String]) throws
        -> [UInt8]
    {
        // `URL.path` drops a trailing slash, which the Engine.IO path needs.
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        var target = components?.percentEncodedPath ?? "/"
        if target.isEmpty { target = "/" }
        if let query = components?.percentEncodedQuery { target += "?" + query }
        // An IPv6 literal needs its brackets back, or its colons read as a port (RFC 9110 §7.2).
        let hostName = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        var head = "\(method) \(target) HTTP/1.1\r\nHost: \(hostName):\(port)\r\nAccept: */*\r\n"
        if method == "POST" {
            head += "Content-Type: text/plain; charset=UTF-8\r\n"
        }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            // A header with a line break would smuggle a second header or request: refuse it loudly
            // (checked on bytes; see HTTPFieldSyntax).
            guard HTTPFieldSyntax.isValidName(name), HTTPFieldSyntax.isValidValue(value) else {
                throw EngineIOError(.transportFailed, "a polling header name or value has a forbidden character")
            }
            head += "\(name): \(value)\r\n"
        }
        return Array(head.utf8)
    }
}
