import Foundation

/// Web Push on the Mastodon sandbox: the subscription endpoint is answered by ``pushSubscriptions``
/// (Sources/TidingsSandbox/Push), after the same token check and rate budget as every other endpoint.
extension MastodonSandboxServer {
    /// The path of the subscription endpoint.
    static let pushRoute = "/api/v1/push/subscription"
}
