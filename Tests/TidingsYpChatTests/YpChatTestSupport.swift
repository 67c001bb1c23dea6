// Shared helpers of the YpChat tests.
import Foundation
import TidingsSandbox
import TidingsSandboxKit
import TidingsYpChat

/// How a test's REST client reaches the sandbox.
enum RESTPath: String, CaseIterable, Sendable {
    /// Over a loopback socket through URLSession (`HTTPClient`).
    case loopback
    /// In process through the server's handler (`inProcessRESTClient`).
    case inProcess
}

/// A sandbox served on a loopback port and a REST client pointed at it (fresh cookie jar), or
/// reached in process.
struct LoopbackYpChat {
    let server: YpChatSandboxServer
    let listener: SandboxHTTPListener
    let client: YpChatRESTClient
    let path: RESTPath

    init(server: YpChatSandboxServer = YpChatSandboxServer(), path: RESTPath = .loopback) throws {
        self.server = server
        self.path = path
        listener = try server.serve()
        let configuration = try YpChatConfiguration(
            baseURL: listener.url.absoluteString, allowsInsecureHTTP: true)
        client =
            path == .loopback
            ? YpChatRESTClient(configuration: configuration)
            : try server.inProcessRESTClient(configuration: configuration)
    }

    /// A second client on the same server with a cookie jar of its own.
    func anotherClient() throws -> YpChatRESTClient {
        path == .loopback
            ? YpChatRESTClient(configuration: client.configuration)
            : try server.inProcessRESTClient(configuration: client.configuration)
    }

    func stop() { listener.stop() }
}

extension Data {
    /// JSON text as bytes.
    static func json(_ text: String) -> Data { Data(text.utf8) }
}

/// Reads `iterator` until an event `match` accepts, returning its result; the events skipped on
/// the way are appended to `skipped`. A stream that ends first fails with `StreamEnded`.
func nextEvent<T>(
    _ iterator: inout AsyncStream<YpChatSocketEvent>.Iterator, skipped: inout [YpChatSocketEvent],
    _ match: (YpChatSocketEvent) -> T?
) async throws -> T {
    while let event = await iterator.next() {
        if let result = match(event) { return result }
        skipped.append(event)
    }
    throw StreamEnded()
}

/// The socket's event stream ended while a test waited for an event.
struct StreamEnded: Error {}

/// A sandbox on loopback whose socket clients reconnect quickly (the delay is not asserted on).
func quickOptions() -> YpChatSocketOptions {
    var options = YpChatSocketOptions()
    options.reconnectionDelay = .milliseconds(20)
    options.reconnectionDelayMax = .milliseconds(50)
    return options
}
