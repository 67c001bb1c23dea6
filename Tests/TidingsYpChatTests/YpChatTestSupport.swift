// Shared helpers of the YpChat tests.
import Foundation
import TidingsSandbox
import TidingsSandboxKit
import TidingsYpChat

/// A sandbox served on a loopback port and a REST client pointed at it (fresh cookie jar).
struct LoopbackYpChat {
    let server: YpChatSandboxServer
    let listener: SandboxHTTPListener
    let client: YpChatRESTClient

    init(server: YpChatSandboxServer = YpChatSandboxServer()) throws {
        self.server = server
        listener = try server.serve()
        let configuration = try YpChatConfiguration(
            baseURL: listener.url.absoluteString, allowsInsecureHTTP: true)
        client = YpChatRESTClient(configuration: configuration)
    }

    /// A second client on the same server with a cookie jar of its own.
    func anotherClient() -> YpChatRESTClient { YpChatRESTClient(configuration: client.configuration) }

    func stop() { listener.stop() }
}

extension Data {
    /// JSON text as bytes.
    static func json(_ text: String) -> Data { Data(text.utf8) }
}
