import Foundation
import TidingsCore

/// `NextcloudPushRouter` routes each Nextcloud proxy push to its account's ``NextcloudPushHandler``, beside
/// ``PushAccountRouter`` (which routes Web Push by endpoint). A proxy push carries no endpoint: the app routes
/// it by a key it supplies (the push token it registered, or its own account key), or by the signature, which
/// only the account's key makes. A Nextcloud Web Push (UnifiedPush) push is routed by its endpoint, as
/// ``PushAccountRouter`` routes Mastodon's, and opened with the account's ``NextcloudWebPushDevice``. A push no account
/// holds is refused with a typed error, never guessed.
public final class NextcloudPushRouter: Sendable {
    private let handlers = LockedState<[String: NextcloudPushHandler]>([:])
    private let webPush = LockedState<[String: (handler: NextcloudPushHandler, device: NextcloudWebPushDevice)]>([:])

    /// An empty router.
    public init() {}

    /// Routes pushes for `key` (a push token or an account key) to `handler`, replacing an earlier one.
    public func register(_ handler: NextcloudPushHandler, key: String) {
        handlers.withLock { $0[key] = handler }
    }

    /// Routes Web Push delivered to `endpoint` (what `device` registered with the account's server) to `handler`,
    /// opened with `device`'s stored keys; replaces an earlier account on that endpoint.
    public func register(_ handler: NextcloudPushHandler, device: NextcloudWebPushDevice, endpoint: URL) {
        webPush.withLock { $0[PushAccountRouter.key(endpoint)] = (handler, device) }
    }

    /// Stops routing the account's pushes, proxy and Web Push (at sign-out).
    public func remove(account: String) {
        handlers.withLock { $0 = $0.filter { $0.value.account != account } }
        webPush.withLock { $0 = $0.filter { $0.value.handler.account != account } }
    }

    /// Hands a Web Push push to the account whose endpoint it was addressed to
    /// (``NextcloudPushHandler/handle(_:device:)``: the activation, or a subject).
    ///
    /// - Throws: ``PushRoutingError/unknownEndpoint`` when no account holds the endpoint; otherwise what the
    ///   handler throws (a body the account's keys do not open changes nothing).
    public func route(_ push: IncomingWebPush) async throws -> (account: String, handling: NextcloudPushHandling) {
        guard let (handler, device) = webPush.withLock({ $0[PushAccountRouter.key(push.endpoint)] }) else {
            throw PushRoutingError.unknownEndpoint
        }
        return (handler.account, try await handler.handle(push, device: device))
    }

    /// The account `key` routes to, if any.
    public func account(for key: String) -> String? { handlers.withLock { $0[key]?.account } }

    /// Hands the push (its JSON `data` object) to the account registered under `key`.
    ///
    /// - Throws: ``PushRoutingError/unknownAccount`` when no account is registered under `key`; otherwise
    ///   what ``NextcloudPushHandler/handle(messageJSON:)`` throws (a bad signature is
    ///   ``NextcloudPushError/invalidSignature`` and changes nothing).
    public func route(messageJSON bytes: [UInt8], key: String) async throws -> (
        account: String, handling: NextcloudPushHandling
    ) {
        guard let handler = handlers.withLock({ $0[key] }) else { throw PushRoutingError.unknownAccount }
        return (handler.account, try await handler.handle(messageJSON: bytes))
    }

    /// Hands the push to the one account whose key signed it (for a device whose pushes do not say which
    /// account they are for). Each account's verification is one RSA public-key operation.
    ///
    /// - Throws: ``PushRoutingError/unknownAccount`` when no registered account signed it (a forged push
    ///   too); ``NextcloudPushError`` when it is malformed or the signing account cannot decrypt it; then what
    ///   ``NextcloudPushHandler/handle(_:)`` throws.
    public func route(messageJSON bytes: [UInt8]) async throws -> (account: String, handling: NextcloudPushHandling) {
        let candidates = handlers.withLock { Array($0.values) }
        var seen = Set<String>()
        for handler in candidates where seen.insert(handler.account).inserted {
            let opened = Result { () throws(NextcloudPushError) in try handler.decryptor.open(messageJSON: bytes) }
            if case .failure(let error) = opened, error.kind == NextcloudPushError.invalidSignature.kind { continue }
            return (handler.account, try await handler.handle(try opened.get()))
        }
        throw PushRoutingError.unknownAccount
    }
}
