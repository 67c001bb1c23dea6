import Foundation
import TidingsCore
import TidingsMastodon
import TidingsNet
import TidingsSandboxKit

/// The sandbox's user stream reached in process, as a `MastodonUserStream` connection.
struct MastodonSandboxStreamConnection: MastodonStreamConnection {
    let socket: SandboxInMemoryWebSocket
    var messages: AsyncThrowingStream<WebSocketMessage, any Error> { socket.messages }
    func close() async { socket.close() }
}

extension MastodonSandboxServer {
    /// A `MastodonStreamConnector` that opens the user stream of `http` (this server's endpoints) in process,
    /// with no socket: the URL's path and query and the request headers go to the server as they would over
    /// loopback, through its fault switches and request log.
    public nonisolated static func inProcessStreamConnector(_ http: SandboxHTTPServer) -> MastodonStreamConnector {
        { url, headers in
            var target = url.path.isEmpty ? "/" : url.path
            if let query = url.query { target += "?\(query)" }
            var fields = HTTPHeaders()
            for header in headers { fields.add(name: header.name, value: header.value) }
            return MastodonSandboxStreamConnection(
                socket: try await http.connectWebSocketInProcess(target: target, headers: fields))
        }
    }
}
