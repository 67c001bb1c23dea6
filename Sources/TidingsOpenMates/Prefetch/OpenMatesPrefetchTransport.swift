import Foundation
import TidingsCore

/// Sends one `POST /v1/sync/offline-prefetch` and hands back the answer, whatever its status.
///
/// The shipped transports are ``OpenMatesPrefetchHTTPTransport`` (HTTP with the `auth_refresh_token` cookie)
/// and the sandbox's in-process one. The prefetcher bounds every call with its own deadline and cancels it
/// when the deadline passes or prefetch stops, so an implementation must honour task cancellation.
public protocol OpenMatesPrefetchTransport: Sendable {
    /// The server's host name, for the rate budget's scope (never a secret).
    var host: String { get }

    /// Sends `request`; `timeout` is the deadline the prefetcher will enforce, for transports that have their own.
    ///
    /// - Throws: whatever the transport throws when the request cannot be sent or its answer not read;
    ///   `CancellationError` when cancelled.
    func post(_ request: OpenMatesPrefetchRequest, timeout: Duration) async throws -> OpenMatesPrefetchReply
}

/// What the server answered to one prefetch request.
public struct OpenMatesPrefetchReply: Sendable, Hashable {
    /// The HTTP status.
    public var status: Int
    /// The response's header fields, names as sent (matched case-insensitively).
    public var headers: [String: String]
    /// The body.
    public var body: Data

    /// Creates a reply.
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The rate-limit headers (`Retry-After`, `X-RateLimit-*`, `Date`) for `RateBudget`.
    public var rateLimitSignal: RateLimitSignal { RateLimitSignal(statusCode: status, headers: headers) }
}
