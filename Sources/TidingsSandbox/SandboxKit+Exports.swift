import TidingsSandboxKit

/// The kit's loopback WebSocket server, under the name this module had before the kit existed, so code
/// that imports only `TidingsSandbox` keeps compiling.
public typealias LoopbackWebSocketServer = TidingsSandboxKit.LoopbackWebSocketServer
/// The kit's server-side WebSocket connection (see ``LoopbackWebSocketServer``).
public typealias LoopbackWebSocketConnection = TidingsSandboxKit.LoopbackWebSocketConnection
