import Foundation
import TidingsCore

/// ``HTTPClient``'s own HTTP/1.1 transport: one request and its response over ``TCPConnection`` (and
/// ``TLSConnection`` for `https`), with a bounded per-origin pool of keep-alive connections.
///
/// It replaces URLSession where TidingsNet has its own TLS (Linux), so nothing links
/// FoundationNetworking (and libcurl). Guarantees:
/// - A connection is pooled only after a complete response that did not ask to close and left no
///   stray bytes; at most ``maximumIdlePerOrigin`` per origin and ``maximumIdle`` in all are kept.
/// - A request on a pooled connection that the server had closed is retried once on a new connection,
///   but only when the method is idempotent or the connection was seen closed before a byte was sent
///   (a POST that may have reached the server is never sent twice).
/// - The body is judged against the size limit as it arrives (``HTTPResponseParser``); a `HEAD`
///   response has no body whatever its `Content-Length` says; 1xx interim responses are skipped.
/// - It has no timeout of its own: the caller bounds the whole exchange (connect, TLS, request,
///   response) and cancels it; every wait ends with `CancellationError` on cancellation, and the
///   connection it was using is closed, never pooled.
final class HTTP1Transport: Sendable {
    /// Idle connections kept per scheme, host and port.
    static let maximumIdlePerOrigin = 4
    /// Idle connections kept in all.
    static let maximumIdle = 16

    /// One response as the transport read it.
    struct Exchange {
        var status: Int
        var headers: HTTPHeaders
        var body: Data
    }

    /// Why an exchange failed, in words that name no header value or body.
    struct Failure: Error {
        let reason: String
    }

    private struct Origin: Hashable {
        var scheme: String
        var host: String
        var port: Int
    }

    private struct State {
        var idle: [Origin: [HTTPStream]] = [:]
        var idleCount = 0
        var connectionsOpened = 0
    }

    private let tls: TLSConfiguration
    private let state = LockedState(State())
    private let received = LockedState(0)

    /// A transport trusting what `tls` says for `https`.
    init(tls: TLSConfiguration = TLSConfiguration()) {
        self.tls = tls
    }

    deinit {
        for stream in state.withLock({ $0.idle.values.joined() }) { stream.connection.close() }
    }

    /// Decoded body bytes read so far over all exchanges, including the piece that passed a limit.
    var bodyBytesReceived: Int { received.withLock { $0 } }

    /// Connections opened so far (tests of keep-alive reuse count them).
    var connectionsOpened: Int { state.withLock { $0.connectionsOpened } }

    /// Sends one request and reads its final (non-1xx) response; redirects are the caller's.
    ///
    /// - Throws: ``Failure`` (connect, TLS, write, read, malformed or oversized response),
    ///   `CancellationError`.
    func exchange(method: String, url: URL, fields: [(name: String, value: String)], body: Data?, limit: Int)
        async throws -> Exchange
    {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let rawHost = url.host, !rawHost.isEmpty
        else { throw Failure(reason: "not an http(s) URL with a host") }
        let bytes: [UInt8]
        do {
            bytes = try HTTP1RequestHead.bytes(method: method, url: url, fields: fields, body: body)
        } catch {
            throw Failure(reason: error.reason)
        }
        let host = rawHost.hasPrefix("[") && rawHost.hasSuffix("]") ? String(rawHost.dropFirst().dropLast()) : rawHost
        let origin = Origin(scheme: scheme, host: host.lowercased(), port: url.port ?? (scheme == "https" ? 443 : 80))
        let idempotent = ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"].contains(method.uppercased())
        let responseToHEAD = method.uppercased() == "HEAD"

        var reused = takeIdle(origin)
        while true {
            let isReused = reused != nil
            let stream: HTTPStream
            if let pooled = reused {
                stream = pooled
            } else {
                stream = try await open(origin)
            }
            reused = nil
            var parser = HTTPResponseParser(maximumBodySize: limit, responseToHEAD: responseToHEAD)
            do {
                try await stream.send(bytes)
                var response = try await stream.receive(&parser)
                // 1xx answers are interim (100 Continue, 103 Early Hints): the real one follows.
                while (100..<200).contains(response.status) && response.status != 101 {
                    addReceived(parser.bodyBytesReceived)
                    parser = HTTPResponseParser(maximumBodySize: limit, responseToHEAD: responseToHEAD)
                    response = try await stream.receive(&parser)
                }
                addReceived(parser.bodyBytesReceived)
                if response.keepAlive && stream.available == 0 && response.status != 101 {
                    putIdle(origin, stream)
                } else {
                    stream.connection.close()
                }
                var headers = HTTPHeaders()
                for (name, value) in parser.headerFields { headers.add(name: name, value: value) }
                return Exchange(status: response.status, headers: headers, body: Data(response.body))
            } catch let stale as HTTPStream.StaleConnection where isReused && idempotent {
                // The server closed the pooled connection before answering: an idempotent request may be
                // repeated on a new one, once (the new connection is not a reused one). A POST is not
                // repeated: `takeIdle` already dropped connections seen closed before it was sent.
                _ = stale
                stream.connection.close()
                continue
            } catch {
                addReceived(parser.bodyBytesReceived)
                stream.connection.close()
                if Task.isCancelled || error is CancellationError { throw CancellationError() }
                throw Self.failure(error)
            }
        }
    }

    private func addReceived(_ count: Int) {
        guard count > 0 else { return }
        received.withLock { $0 += count }
    }

    private static func failure(_ error: any Error) -> Failure {
        switch error {
        case let error as HTTPStream.StaleConnection: Failure(reason: error.reason)
        case let error as EngineIOError: Failure(reason: error.detail)
        case let error as Failure: error
        default: Failure(reason: "\(error)")
        }
    }

    private func open(_ origin: Origin) async throws -> HTTPStream {
        do {
            // Unbounded here: the caller's deadline covers resolution, connect and the TLS handshake.
            let tcp = try await TCPConnection.connect(host: origin.host, port: origin.port, timeout: .seconds(3600))
            state.withLock { $0.connectionsOpened += 1 }
            guard origin.scheme == "https" else { return HTTPStream(tcp) }
            #if TIDINGS_OPENSSL
                return HTTPStream(try await TLSConnection.connect(over: tcp, host: origin.host, configuration: tls))
            #else
                tcp.close()
                throw Failure(reason: "https needs OpenSSL on this platform")
            #endif
        } catch {
            if Task.isCancelled || error is CancellationError { throw CancellationError() }
            throw Failure(reason: "connecting to \(origin.host):\(origin.port) failed: \(error)")
        }
    }

    /// The most recently used idle connection to `origin` that still looks usable; the others found on the
    /// way are closed.
    private func takeIdle(_ origin: Origin) -> HTTPStream? {
        while let stream = state.withLock({ locked -> HTTPStream? in
            guard let stream = locked.idle[origin]?.popLast() else { return nil }
            locked.idleCount -= 1
            return stream
        }) {
            guard stream.isUnusableWhileIdle else { return stream }
            stream.connection.close()
        }
        return nil
    }

    private func putIdle(_ origin: Origin, _ stream: HTTPStream) {
        let refused = state.withLock { locked -> Bool in
            var streams = locked.idle[origin, default: []]
            guard streams.count < Self.maximumIdlePerOrigin, locked.idleCount < Self.maximumIdle else { return true }
            streams.append(stream)
            locked.idle[origin] = streams
            locked.idleCount += 1
            return false
        }
        if refused { stream.connection.close() }
    }
}
