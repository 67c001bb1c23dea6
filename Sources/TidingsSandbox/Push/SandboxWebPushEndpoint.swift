import Foundation
import TidingsCore
import TidingsPush
import TidingsSandboxKit

/// A loopback Web Push endpoint standing in for the device end of a push service: each registered subscription
/// gets `POST /push/<id>`; a message there is checked as a push service checks it (VAPID: signature, origin,
/// expiry), then decrypted with that subscription's keys as the device would.
///
/// Answers 201 for a delivered message, 401 for a missing or invalid VAPID header, 404 for an unknown id, 400
/// for a body that does not decrypt (a real push service could not tell; here the device's verdict is useful).
public final class SandboxWebPushEndpoint: Sendable {
    /// One message as it arrived.
    public struct Message: Sendable {
        /// The subscription it was sent to.
        public let id: String
        /// The raw body.
        public let body: [UInt8]
        /// `Content-Encoding`, `Crypto-Key` and `Encryption` as sent.
        public let contentEncoding: String?
        /// The `Crypto-Key` header.
        public let cryptoKey: String?
        /// The `Encryption` header.
        public let encryption: String?
        /// What the VAPID header proved, or nil when it was refused.
        public let vapid: WebPushVAPID.Claims?
        /// The plaintext, when it decrypted.
        public let plaintext: [UInt8]?
        /// Why it was refused, when it was.
        public let failure: String?
    }

    private let registrations = LockedState([String: WebPushSubscriptionKeys]())
    private let received = SandboxPushWaiters<Message>()
    private let now: @Sendable () -> Date
    private let onMessage: (@Sendable (Message) -> Void)?

    /// An endpoint with no subscriptions; `now` judges VAPID expiry; `onMessage` sees each message as it is
    /// recorded (a CLI prints it).
    public init(now: @escaping @Sendable () -> Date = { Date() }, onMessage: (@Sendable (Message) -> Void)? = nil) {
        self.now = now
        self.onMessage = onMessage
    }

    /// Accepts pushes for `id`, decrypting them with `keys`.
    public func register(_ id: String, keys: WebPushSubscriptionKeys) {
        registrations.withLock { $0[id] = keys }
    }

    /// The messages received so far.
    public var messages: [Message] { received.items }

    /// The messages once `count` have arrived, or those that arrived when `timeout` passes.
    public func messages(count: Int, timeout: Duration = .seconds(30)) async -> [Message] {
        await received.wait(for: count, timeout: timeout)
    }

    /// The endpoint's HTTP server (serve it on loopback with `serve(port:)`).
    public func httpServer() -> SandboxHTTPServer {
        var router = SandboxHTTPRouter()
        router.add("POST", "/push/:id") { request in self.receive(request) }
        return SandboxHTTPServer(router: router)
    }

    private func receive(_ request: SandboxHTTPRequest) -> SandboxHTTPResponse {
        let id = request.pathParameters["id"] ?? ""
        guard let keys = registrations.withLock({ $0[id] }) else { return .text("unknown subscription", status: 404) }
        let host = request.headers["Host"] ?? "127.0.0.1"
        let endpoint = URL(string: "http://\(host)\(request.path)") ?? URL(string: "http://127.0.0.1/")!
        let body = [UInt8](request.body)
        let contentEncoding = request.headers["Content-Encoding"]
        let cryptoKey = request.headers["Crypto-Key"]
        let encryption = request.headers["Encryption"]
        var vapid: WebPushVAPID.Claims?
        var plaintext: [UInt8]?
        var failure: String?
        var status = 201
        do {
            vapid = try WebPushVAPID.verify(
                authorization: request.headers["Authorization"], cryptoKey: cryptoKey, endpoint: endpoint, now: now())
        } catch {
            failure = "\(error)"
            status = 401
        }
        if vapid != nil {
            do {
                plaintext = try WebPushDecryptor(keys: keys).decrypt(
                    body, contentEncoding: contentEncoding, cryptoKey: cryptoKey, encryption: encryption)
            } catch {
                failure = "\(error)"
                status = 400
            }
        }
        let message = Message(
            id: id, body: body, contentEncoding: contentEncoding, cryptoKey: cryptoKey, encryption: encryption,
            vapid: vapid, plaintext: plaintext, failure: failure)
        received.append(message)
        onMessage?(message)
        return .text(status == 201 ? "" : "refused", status: status)
    }
}
