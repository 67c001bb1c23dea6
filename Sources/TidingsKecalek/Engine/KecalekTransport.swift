import Foundation
import TidingsNet

/// Opens connections to a Kecalek server; the client calls it again to reconnect.
///
/// The shipped transports are the WebSocket one (``KecalekWebSocketTransport``) and the sandbox's
/// in-process one; tests may supply their own.
public protocol KecalekTransport: Sendable {
    /// Opens a fresh connection.
    ///
    /// - Throws: whatever the underlying connection throws when the server cannot be reached.
    func connect() async throws -> KecalekChannel
}

/// One open connection: text frames out, text frames in (as `Data`).
///
/// TidingsNet's `FrameChannel` (with its `overWebSocket`) is the one shape every backend's transport uses.
public typealias KecalekChannel = FrameChannel<Data>
