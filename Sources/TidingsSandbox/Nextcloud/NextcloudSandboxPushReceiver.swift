import Foundation
import TidingsCore
import TidingsSandboxKit

/// The device end of the Nextcloud push proxy on loopback: what APNs or FCM would hand the app. The push token a
/// device registers is a URL of this receiver (``pushToken(device:port:)``); the proxy stand-in POSTs each push's
/// JSON (`{"subject", "signature"}`) there, and the receiver keeps it unopened for the app's decryptor.
///
/// Answers 200 for a push to a known device, 404 for an unknown one, 400 for a body that is not a JSON object.
public final class NextcloudSandboxPushReceiver: Sendable {
    /// One push as it arrived.
    public struct Push: Sendable {
        /// The device it was addressed to (the token's last path component).
        public let device: String
        /// The raw JSON body, as `NextcloudProxyPushDecryptor.open(messageJSON:)` takes it.
        public let body: [UInt8]
    }

    private let devices = LockedState(Set<String>())
    private let received = SandboxPushWaiters<Push>()
    private let onPush: (@Sendable (Push) -> Void)?

    /// A receiver with no devices; `onPush` sees each push as it is recorded (a CLI prints it).
    public init(onPush: (@Sendable (Push) -> Void)? = nil) { self.onPush = onPush }

    /// Accepts pushes for `device`.
    public func register(device: String) { devices.withLock { _ = $0.insert(device) } }

    /// The push token for `device` when the receiver listens on `port`.
    public static func pushToken(device: String, port: Int) -> String {
        "http://127.0.0.1:\(port)/proxy-push/\(device)"
    }

    /// The pushes received so far.
    public var pushes: [Push] { received.items }

    /// The pushes once `count` have arrived, or those that arrived when `timeout` passes.
    public func pushes(count: Int, timeout: Duration = .seconds(30)) async -> [Push] {
        await received.wait(for: count, timeout: timeout)
    }

    /// The receiver's HTTP server (serve it on loopback with `serve(port:)`).
    public func httpServer() -> SandboxHTTPServer {
        var router = SandboxHTTPRouter()
        router.add("POST", "/proxy-push/:device") { request in self.receive(request) }
        return SandboxHTTPServer(router: router)
    }

    private func receive(_ request: SandboxHTTPRequest) -> SandboxHTTPResponse {
        let device = request.pathParameters["device"] ?? ""
        guard devices.withLock({ $0.contains(device) }) else { return .text("unknown device", status: 404) }
        guard (try? JSONValue(parsing: [UInt8](request.body), maximumDepth: 4))?.objectValue != nil else {
            return .text("not a JSON object", status: 400)
        }
        let push = Push(device: device, body: [UInt8](request.body))
        received.append(push)
        onPush?(push)
        return .text("", status: 200)
    }
}
