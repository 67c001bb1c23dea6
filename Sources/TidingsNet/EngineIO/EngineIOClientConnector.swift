import Foundation

/// Opens ``EngineIOClient`` sessions to one server: the connector a ``SocketIOClient`` uses for a real
/// server.
public struct EngineIOClientConnector: EngineIOConnector {
    /// Where and how to connect.
    public var configuration: EngineIOClient.Configuration
    private let clock: any Clock<Duration>
    private let http: any EngineIOPollingHTTP
    private let webSocketFactory: any EngineIOWebSocketFactory

    /// A connector; by default polling runs over a keep-alive ``EngineIOHTTPConnectionPool`` and
    /// WebSocket over Tidings' own ``WebSocket``.
    ///
    /// - Parameters:
    ///   - configuration: where and how to connect.
    ///   - clock: the clock for handshake, probe and heartbeat timing.
    ///   - tls: trust settings for `https`/`wss`, used by the default transports.
    ///   - http: the polling transport (default: a new connection pool).
    ///   - webSocketFactory: the WebSocket transport (default: ``EngineIONetWebSocketFactory``).
    public init(
        configuration: EngineIOClient.Configuration,
        clock: any Clock<Duration> = ContinuousClock(),
        tls: TLSConfiguration = TLSConfiguration(),
        http: (any EngineIOPollingHTTP)? = nil,
        webSocketFactory: (any EngineIOWebSocketFactory)? = nil
    ) {
        self.configuration = configuration
        self.clock = clock
        self.http = http ?? EngineIOHTTPConnectionPool(tls: tls, clock: clock)
        self.webSocketFactory = webSocketFactory ?? EngineIONetWebSocketFactory(tls: tls, clock: clock)
    }

    /// Opens a session, returning once the handshake is done.
    ///
    /// - Throws: the errors of ``EngineIOClient/connect(configuration:clock:http:webSocketFactory:)``.
    public func connect() async throws -> any EngineIOSession {
        try await EngineIOClient.connect(
            configuration: configuration, clock: clock, http: http, webSocketFactory: webSocketFactory)
    }
}

/// Opens Engine.IO WebSockets with Tidings' own RFC 6455 ``WebSocket``.
///
/// WebSocket-level pings are off: Engine.IO's heartbeat watches the connection.
public struct EngineIONetWebSocketFactory: EngineIOWebSocketFactory {
    private let tls: TLSConfiguration
    private let clock: any Clock<Duration>
    private let maximumMessageSize: Int

    /// A factory with the given trust settings, clock and message limit.
    public init(
        tls: TLSConfiguration = TLSConfiguration(),
        clock: any Clock<Duration> = ContinuousClock(),
        maximumMessageSize: Int = 16 * 1024 * 1024
    ) {
        self.tls = tls
        self.clock = clock
        self.maximumMessageSize = maximumMessageSize
    }

    /// Opens a WebSocket to `url` with extra request `headers`.
    ///
    /// - Throws: ``EngineIOError/transportFailed`` with the ``WebSocketError`` underneath.
    public func connect(to url: URL, headers: [String: String]) async throws -> any EngineIOWebSocket {
        let configuration = WebSocket.Configuration(
            headers: headers.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) },
            maximumMessageSize: maximumMessageSize,
            pingInterval: nil,
            tls: tls,
            clock: clock)
        do {
            return NetEngineIOWebSocket(try await WebSocket.connect(to: url, configuration: configuration))
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw EngineIOError(.transportFailed, "WebSocket connect failed: \(error)")
        }
    }
}

/// Adapts ``WebSocket`` to ``EngineIOWebSocket``.
final class NetEngineIOWebSocket: EngineIOWebSocket {
    let socket: WebSocket
    let frames: AsyncThrowingStream<EngineIOFrame, any Error>

    init(_ socket: WebSocket) {
        self.socket = socket
        let source = IteratorBox(socket.messages.makeAsyncIterator())
        frames = AsyncThrowingStream {
            switch try await source.next() {
            case .text(let text): return .text(text)
            case .binary(let bytes): return .binary(bytes)
            case nil: return nil
            }
        }
    }

    func send(_ frame: EngineIOFrame) async throws {
        switch frame {
        case .text(let text): try await socket.send(.text(text))
        case .binary(let bytes): try await socket.send(.binary(bytes))
        }
    }

    func close() async {
        await socket.close()
    }
}

/// Holds the one iterator of a stream that a single consumer pulls from.
private final class IteratorBox: @unchecked Sendable {
    // Only the single consumer of `frames` calls `next()`, one call at a time.
    private var iterator: AsyncThrowingStream<WebSocketMessage, any Error>.AsyncIterator

    init(_ iterator: AsyncThrowingStream<WebSocketMessage, any Error>.AsyncIterator) {
        self.iterator = iterator
    }

    func next() async throws -> WebSocketMessage? {
        try await iterator.next()
    }
}

extension SocketIOClient {
    /// A client for the server at `url`, over real HTTP long-polling and WebSocket.
    ///
    /// For example:
    /// ```swift
    /// let client = SocketIOClient(url: URL(string: "https://chat.example")!, transports: .webSocket)
    /// ```
    /// - Parameters:
    ///   - url: the server's base URL (`http` or `https`).
    ///   - transports: which transports to use.
    ///   - headers: extra request headers (authorization, cookies).
    ///   - version: the Engine.IO revision (3 for socket.io 2.x servers, which also turns on
    ///     ``SocketIOClient/Configuration/legacyProtocol``).
    ///   - configuration: reconnection and buffering.
    ///   - tls: trust settings for `https`/`wss`.
    ///   - clock: the clock for every timeout and delay.
    public init(
        url: URL,
        transports: EngineIOClient.Transports = .pollingThenWebSocket,
        headers: [String: String] = [:],
        version: EngineIOVersion = .v4,
        configuration: Configuration = Configuration(),
        tls: TLSConfiguration = TLSConfiguration(),
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        let engine = EngineIOClient.Configuration(
            url: url, transports: transports, version: version, headers: headers)
        var configuration = configuration
        if version == .v3 { configuration.legacyProtocol = true }
        self.init(
            connector: EngineIOClientConnector(configuration: engine, clock: clock, tls: tls),
            configuration: configuration, clock: clock)
    }
}
