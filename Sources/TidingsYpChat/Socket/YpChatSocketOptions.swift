import TidingsNet

/// The socket's connection options, with the Android client's (`SocketClient.kt`) as defaults:
/// reconnect forever with 1 s growing to 5 s between attempts, a 20 s connect timeout, polling
/// first then an upgrade to WebSocket, Engine.IO 4.
public struct YpChatSocketOptions: Sendable {
    /// Whether to reconnect after a dropped connection.
    public var reconnects = true
    /// The most reconnection attempts in a row (nil: no limit).
    public var reconnectionAttempts: Int?
    /// The first delay between attempts.
    public var reconnectionDelay: Duration = .seconds(1)
    /// The longest delay between attempts.
    public var reconnectionDelayMax: Duration = .seconds(5)
    /// How long a connect may take (handshake and namespace connect).
    public var timeout: Duration = .seconds(20)
    /// The transports, in the order tried.
    public var transports: EngineIOClient.Transports = .pollingThenWebSocket
    /// The Engine.IO protocol version: 4 by default, 3 for a socket.io 2.x server.
    public var engineIOVersion: EngineIOVersion = .v4

    /// The Android defaults.
    public init() {}

    /// The `SocketIOClient` configuration these options describe.
    var socketIOConfiguration: SocketIOClient.Configuration {
        SocketIOClient.Configuration(
            reconnects: reconnects,
            reconnectPolicy: SocketIOReconnectPolicy(
                delay: reconnectionDelay, maximumDelay: reconnectionDelayMax, maximumAttempts: reconnectionAttempts),
            connectTimeout: timeout, legacyProtocol: engineIOVersion == .v3)
    }
}
