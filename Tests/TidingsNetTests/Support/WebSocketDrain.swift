import TidingsNet

/// Collects a socket's messages until the stream ends; returns them with the error it ended with (nil
/// when it ended cleanly), so a test can assert both what arrived before the end and how it ended.
func drain(_ socket: WebSocket) async -> ([WebSocketMessage], (any Error)?) {
    var received: [WebSocketMessage] = []
    do {
        for try await message in socket.messages { received.append(message) }
        return (received, nil)
    } catch {
        return (received, error)
    }
}
