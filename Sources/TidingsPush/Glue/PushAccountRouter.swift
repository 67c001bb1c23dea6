import Foundation
import TidingsCore

/// `PushAccountRouter` routes each incoming push to its account by the endpoint it was addressed to: every
/// account subscribes with an endpoint of its own, so the endpoint alone names the account, and a push for an
/// endpoint no account holds is refused with a typed error (it is never guessed).
public final class PushAccountRouter: Sendable {
    private let raisers = LockedState<[String: MastodonNotificationRaiser]>([:])

    /// An empty router.
    public init() {}

    /// Routes pushes to `endpoint` to `raiser` (replacing an earlier account on that endpoint).
    public func register(_ endpoint: URL, to raiser: MastodonNotificationRaiser) {
        raisers.withLock { $0[Self.key(endpoint)] = raiser }
    }

    /// Stops routing the account's endpoints (at sign-out).
    public func remove(account: String) {
        raisers.withLock { $0 = $0.filter { $0.value.account != account } }
    }

    /// The account an endpoint routes to, if any.
    public func account(for endpoint: URL) -> String? { raisers.withLock { $0[Self.key(endpoint)]?.account } }

    /// Hands `push` to its account's raiser.
    ///
    /// - Throws: ``PushRoutingError/unknownEndpoint`` when no account holds the endpoint; otherwise what the
    ///   raiser's `handle` throws.
    public func route(_ push: IncomingWebPush) async throws -> (account: String, handling: PushHandling) {
        guard let raiser = raisers.withLock({ $0[Self.key(push.endpoint)] }) else {
            throw PushRoutingError.unknownEndpoint
        }
        return (raiser.account, try await raiser.handle(push))
    }

    /// The endpoint without fragment, scheme and host lowercased: what the push service addressed.
    static func key(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return url.absoluteString
        }
        components.fragment = nil
        components.scheme = components.scheme?.lowercased()
        components.host = components.host?.lowercased()
        return components.string ?? url.absoluteString
    }
}

/// Why a push could not be routed.
public struct PushRoutingError: TidingsError {
    enum Code: String { case unknownEndpoint, unknownAccount }

    let code: Code

    /// No signed-in account holds the endpoint the push was addressed to.
    public static let unknownEndpoint = PushRoutingError(code: .unknownEndpoint)
    /// No signed-in account is registered for the proxy push's key, or none of them signed it.
    public static let unknownAccount = PushRoutingError(code: .unknownAccount)

    /// The kind.
    public var kind: TidingsErrorKind { TidingsErrorKind(code) }
    /// The kind (the endpoint is not repeated: it is a capability URL).
    public var description: String { "PushRoutingError.\(code.rawValue)" }
}
