import Foundation
import TidingsCore
import TidingsMastodon
import TidingsNet

/// The transport a Nextcloud Social account's `MastodonAPIClient` sends through: the Social app's
/// Mastodon-compatible API takes the account's app password as HTTP Basic, not a bearer token.
///
/// Guarantees: every request leaves with `Authorization: Basic` (user and app password) and `OCS-APIRequest: true`
/// and without a bearer token; the credentials are never put in the URL, and the `description` hides the password.
public struct NextcloudSocialTransport: MastodonTransport, CustomStringConvertible {
    /// The account's login.
    public let credentials: NextcloudCredentials
    private let send: @Sendable (HTTPRequest) async throws -> HTTPResponse

    /// A transport that sends through `send` (`HTTPClient.response(for:)`, or a sandbox in process).
    public init(credentials: NextcloudCredentials, send: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse)
    {
        self.credentials = credentials
        self.send = send
    }

    /// A transport over TidingsNet's `HTTPClient` (its cookie jar, rate budget and deadlines).
    public init(credentials: NextcloudCredentials, client: HTTPClient) {
        self.init(credentials: credentials) { try await client.response(for: $0) }
    }

    /// Sends `request` with the app password as Basic authorization in place of any bearer token.
    ///
    /// - Throws: What the underlying transport throws when no HTTP answer arrived.
    public func response(for request: HTTPRequest) async throws -> HTTPResponse {
        var request = request
        request.bearerToken = nil
        request.headers["Authorization"] = credentials.authorizationHeader
        request.headers["OCS-APIRequest"] = "true"
        return try await send(request)
    }

    /// The user only.
    public var description: String { "NextcloudSocialTransport(\(credentials))" }
}
