import Foundation
import TidingsCore

/// A `WebSocket` is an RFC 6455 client connection over ``TCPConnection`` (ws) or ``TLSConnection`` (wss).
///
/// Guarantees:
/// - ``messages`` yields every text and binary message in order, reassembled from fragments, text
///   validated as UTF-8 (also across fragments). It finishes normally when the close handshake
///   completes (either side starting it; see ``closeStatus``) and throws a ``WebSocketError`` when
///   the connection dies: the peer vanished (`connectionLost`), broke the protocol, or stopped
///   answering our pings (`pongTimeout`).
/// - Pings from the server are answered with pongs at once. With a ``Configuration/pingInterval``,
///   we ping on that interval and declare the peer dead when no pong arrives within
///   ``Configuration/pongTimeout``; both measured on the configured clock. Without it, an idle
///   connection never times out.
/// - Sends never interleave: each message goes out as one frame, whole.
///
/// For example:
///
/// ```swift
/// var configuration = WebSocket.Configuration()
/// configuration.headers = [("Authorization", "Bearer \(token)")]
/// let socket = try await WebSocket.connect(to: URL(string: "wss://example.social/api/v1/streaming")!,
///                                          configuration: configuration)
/// for try await message in socket.messages { handle(message) }
/// ```
///
/// Call ``close(code:reason:)`` when done; releasing the object without closing drops the connection.
public final class WebSocket: Sendable {
    /// Settings for one connection.
    public struct Configuration: Sendable {
        /// Extra request headers (`Authorization`, `Origin`, `Cookie`, …), sent as given.
        ///
        /// - Warning: values are secrets as far as Tidings is concerned: they never appear in a log
        ///   record or an error description.
        public var headers: [(name: String, value: String)]
        /// Subprotocols to offer, most preferred first (`Sec-WebSocket-Protocol`).
        public var subprotocols: [String]
        /// Limit for TCP connect, TLS handshake and the HTTP upgrade together.
        public var connectTimeout: Duration
        /// The largest message accepted, in bytes; larger ones fail with close code 1009.
        public var maximumMessageSize: Int
        /// How many received messages may wait for the consumer of ``WebSocket/messages``.
        ///
        /// Back-pressure: with this many waiting, the connection stops reading its socket until the
        /// consumer takes one, and the kernel's TCP window slows the server down. Memory therefore stays
        /// below this many messages of at most ``maximumMessageSize`` bytes (plus kernel buffers) however
        /// fast the server sends. While reading is paused, control frames wait too (so keep reading
        /// ``WebSocket/messages`` even when only sending): a consumer stalled longer than
        /// ``pongTimeout`` (with our pings on) loses the connection with `pongTimeout`.
        public var maximumBufferedMessages: Int
        /// How many bytes of received messages may wait for the consumer of ``WebSocket/messages``;
        /// the same back-pressure as ``maximumBufferedMessages``, whichever is reached first, so
        /// buffered messages never hold more than this plus one message.
        public var maximumBufferedBytes: Int
        /// How often we ping the server; `nil` disables our pings (the server's pings are still answered).
        public var pingInterval: Duration?
        /// How long after our ping a pong may take before the peer is declared dead.
        public var pongTimeout: Duration
        /// How long ``WebSocket/close(code:reason:)`` may take: sending our close frame (even to a peer
        /// that stopped reading) and waiting for the server's.
        public var closeTimeout: Duration
        /// Trust settings for `wss://`.
        public var tls: TLSConfiguration
        /// The clock for every timeout and interval above.
        public var clock: any Clock<Duration>
        /// Where connection events go (never headers or payloads).
        public var logger: TidingsLogger
        /// Whether a dense stream of small messages may be read in batches (Linux).
        ///
        /// While small messages arrive within microseconds of each other, the connection asks the kernel
        /// to wake it once several messages' worth of bytes are waiting (`SO_RCVLOWAT`) rather than for
        /// each one, and reads whatever arrived after at most 100 µs (plus the kernel's timer slack). That
        /// costs the client about half the CPU and wake-ups on such streams, and spares the server a
        /// wake-up per message. A request–response exchange or a bulk transfer is never delayed. Turn it
        /// off only when every microsecond of a message inside a dense stream matters more than battery.
        public var coalescesDenseReads: Bool

        /// The defaults: no extra headers, 30 s connect timeout, 16 MiB messages, 256 buffered messages
        /// or 16 MiB buffered bytes, ping every 30 s with a 10 s pong timeout, 5 s close timeout, system
        /// trust store, the continuous clock, dense reads coalesced.
        public init(
            headers: [(name: String, value: String)] = [],
            subprotocols: [String] = [],
            connectTimeout: Duration = .seconds(30),
            maximumMessageSize: Int = 16 * 1024 * 1024,
            maximumBufferedMessages: Int = 256,
            maximumBufferedBytes: Int = 16 * 1024 * 1024,
            pingInterval: Duration? = .seconds(30),
            pongTimeout: Duration = .seconds(10),
            closeTimeout: Duration = .seconds(5),
            tls: TLSConfiguration = TLSConfiguration(),
            clock: any Clock<Duration> = ContinuousClock(),
            logger: TidingsLogger = .disabled,
            coalescesDenseReads: Bool = true
        ) {
            self.headers = headers
            self.subprotocols = subprotocols
            self.connectTimeout = connectTimeout
            self.maximumMessageSize = maximumMessageSize
            self.maximumBufferedMessages = max(1, maximumBufferedMessages)
            self.maximumBufferedBytes = max(1, maximumBufferedBytes)
            self.pingInterval = pingInterval
            self.pongTimeout = pongTimeout
            self.closeTimeout = closeTimeout
            self.tls = tls
            self.clock = clock
            self.logger = logger
            self.coalescesDenseReads = coalescesDenseReads
        }
    }

    /// The subprotocol the server selected, if any.
    public let subprotocol: String?
    /// The handshake response headers, names lower-cased (repeated headers joined with ", ").
    public let responseHeaders: [String: String]
    /// The messages from the server, in order. Iterate it from one task only.
    ///
    /// It finishes after a completed close handshake and throws ``WebSocketError`` when the
    /// connection fails.
    public let messages: AsyncThrowingStream<WebSocketMessage, any Error>

    private let core: WebSocketConnection
    private let incoming: BackPressureQueue<WebSocketMessage>
    /// The configured message limit, which applies to what we send as well as what we accept.
    private let maximumMessageSize: Int

    private init(
        core: WebSocketConnection, response: WebSocketHandshake.Response,
        messages: AsyncThrowingStream<WebSocketMessage, any Error>, incoming: BackPressureQueue<WebSocketMessage>,
        maximumMessageSize: Int
    ) {
        self.core = core
        self.incoming = incoming
        self.maximumMessageSize = maximumMessageSize
        self.subprotocol = response.subprotocol
        self.responseHeaders = response.headers
        self.messages = messages
    }

    deinit { core.abort(WebSocketError(.closed, detail: "the WebSocket object was released")) }

    /// Opens a connection: TCP, TLS for `wss://`, then the HTTP upgrade.
    ///
    /// - Parameters:
    ///   - url: a `ws://` or `wss://` URL; the path and query are sent as the request target.
    ///   - configuration: headers, limits, timeouts, trust and clock.
    /// - Returns: an open connection; its reader and pinger already run.
    /// - Throws: ``WebSocketError`` (`invalidURL`, `handshakeFailed`, `timedOut`, `connectionLost` with
    ///   the ``TransportError`` underneath — certificate and host-name failures among them),
    ///   `CancellationError`.
    public static func connect(to url: URL, configuration: Configuration = Configuration()) async throws -> WebSocket {
        let target = try WebSocketTarget(url: url)
        let handshake = try WebSocketHandshake(
            target: target, headers: configuration.headers, subprotocols: configuration.subprotocols)
        let log = configuration.logger.scoped("websocket")
        let opened = try await withTimeout(
            configuration.connectTimeout, clock: configuration.clock,
            timeoutError: { WebSocketError(.timedOut, detail: "connect to \(target.host):\(target.port) timed out") }
        ) { () -> OpenedStream in
            try await open(target: target, handshake: handshake, configuration: configuration)
        }
        log.info("connected to \(target.host):\(target.port)")
        let incoming = BackPressureQueue<WebSocketMessage>(
            limit: configuration.maximumBufferedMessages, byteLimit: configuration.maximumBufferedBytes,
            size: { message in
                switch message {
                case .text(let text): text.utf8.count
                case .binary(let bytes): bytes.count
                }
            })
        let core = WebSocketConnection(
            stream: opened.stream, configuration: configuration, incoming: incoming, logger: log)
        core.start(leftover: opened.response.leftover)
        return WebSocket(
            core: core, response: opened.response, messages: incoming.makeStream(), incoming: incoming,
            maximumMessageSize: configuration.maximumMessageSize)
    }

    private struct OpenedStream: Sendable {
        var stream: any ByteStream
        var response: WebSocketHandshake.Response
    }

    private static func open(
        target: WebSocketTarget, handshake: WebSocketHandshake, configuration: Configuration
    ) async throws -> OpenedStream {
        var stream: any ByteStream
        do {
            let tcp = try await TCPConnection.connect(
                host: target.host, port: target.port, timeout: configuration.connectTimeout, clock: configuration.clock)
            #if os(Linux)
                if !configuration.coalescesDenseReads { tcp.useReadCoalescing(.disabled) }
            #endif
            if target.secure {
                #if TIDINGS_OPENSSL
                    stream = try await TLSConnection.connect(
                        over: tcp, host: target.host, configuration: configuration.tls)
                #else
                    tcp.close()
                    throw WebSocketError(.invalidURL, detail: "wss:// needs OpenSSL on this platform")
                #endif
            } else {
                stream = tcp
            }
        } catch let error as TransportError {
            throw WebSocketError(.connectionLost, detail: "could not connect", underlying: error)
        }
        do {
            try await stream.write(handshake.request)
            var buffer: [UInt8] = []
            while true {
                let bytes = try await stream.read()
                guard !bytes.isEmpty else {
                    throw WebSocketError(
                        .handshakeFailed, detail: "the server closed the connection during the handshake")
                }
                buffer += bytes
                if let response = try handshake.parse(buffer) {
                    return OpenedStream(stream: stream, response: response)
                }
            }
        } catch let error as TransportError {
            stream.close()
            throw WebSocketError(.connectionLost, detail: "connection failed during the handshake", underlying: error)
        } catch {
            stream.close()
            throw error
        }
    }

    /// Sends one message as a single frame.
    ///
    /// Messages go out in call order. A small message is queued and the call returns at once (a
    /// burst of them shares a write); one that brings the queue to 64 KiB or more returns once
    /// written. A later ``close(code:reason:)`` sends everything queued before its close frame.
    ///
    /// - Throws: ``WebSocketError`` `closed` after a close started, `messageTooBig` above the
    ///   configured maximum, `connectionLost` when the transport failed (a failed write of a queued
    ///   message is reported by the next send); `CancellationError`.
    public func send(_ message: WebSocketMessage) async throws {
        let size =
            switch message {
            case .text(let text): text.utf8.count
            case .binary(let bytes): bytes.count
            }
        guard size <= maximumMessageSize else {
            throw WebSocketError(
                .messageTooBig, detail: "message of \(size) bytes exceeds the limit of \(maximumMessageSize)")
        }
        switch message {
        case .text(let text): try await core.sendData(opcode: .text, payload: Array(text.utf8))
        case .binary(let bytes): try await core.sendData(opcode: .binary, payload: bytes)
        }
    }

    /// Sends a text message.
    public func send(text: String) async throws { try await send(.text(text)) }

    /// Sends a binary message.
    public func send(binary: [UInt8]) async throws { try await send(.binary(binary)) }

    /// Sends a ping with up to 125 bytes of payload (the configured pinger needs no help).
    public func ping(_ payload: [UInt8] = []) async throws {
        try await core.sendControl(WebSocketFrame(opcode: .ping, payload: Array(payload.prefix(125))))
    }

    /// Runs the close handshake: sends a close frame, waits (up to the close timeout) for the
    /// server's, then releases the connection. ``messages`` finishes normally. Idempotent.
    public func close(code: WebSocketCloseCode = .normalClosure, reason: String = "") async {
        await core.close(code: code, reason: reason)
    }

    /// The code and reason of the close frame the server sent, once the connection closed with one.
    public var closeStatus: (code: WebSocketCloseCode, reason: String)? { core.closeStatus }

    /// Received messages waiting for the consumer of ``messages`` now, and the most that ever waited.
    var bufferedMessages: (count: Int, peak: Int) { (incoming.count, incoming.peakCount) }

    /// Bytes of received messages waiting for the consumer now, and the most that ever waited.
    var bufferedBytes: (count: Int, peak: Int) { incoming.bufferedBytes }

    /// Bytes queued and not yet handed to the transport, and whether a transport write is running.
    var outgoingState: (queuedBytes: Int, writing: Bool) { core.outgoingState }
}
