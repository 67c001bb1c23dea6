@testable import TidingsNet

/// A TCP connection on loopback with both its ends: a fresh listener on a free port, our client connected
/// to `host` (a name goes through the resolver), and the connection the listener accepted. The listener
/// stays open; close it when the test is done with it.
func loopbackPair(
    host: String = "127.0.0.1"
) async throws -> (listener: TCPListener, client: TCPConnection, server: TCPConnection) {
    let listener = try TCPListener.bind(port: 0)
    async let accepted = listener.accept()
    let client = try await TCPConnection.connect(host: host, port: listener.port)
    return (listener, client, try await accepted)
}
