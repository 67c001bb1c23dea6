import Foundation
import TidingsNet

/// Opens connections to an OpenMates server; the client calls it again to reconnect.
///
/// The shipped transports are ``OpenMatesWebSocketTransport`` and the sandbox's in-process one; tests may
/// supply their own.
public protocol OpenMatesTransport: Sendable {
    /// Opens a fresh connection.
    ///
    /// - Throws: whatever the underlying connection throws when the server cannot be reached or refuses.
    func connect() async throws -> OpenMatesChannel
}

/// One open connection: text frames both ways.
///
/// TidingsNet's `FrameChannel` (with its `overWebSocket`) is the one shape every backend's transport uses.
public typealias OpenMatesChannel = FrameChannel<String>
