import Foundation
import TidingsNet

/// `MastodonTransport` sends one HTTP request and returns the server's answer, whatever its status.
///
/// `HTTPClient` is the transport for real servers (give it no `rateBudget` of its own:
/// ``MastodonAPIClient`` spends its budget itself, so a second budget would count each request twice);
/// tests and previews pass a transport that answers in process.
public protocol MastodonTransport: Sendable {
    /// The response to `request`; throws only when no HTTP answer arrived (connection, timeout, cancellation).
    func response(for request: HTTPRequest) async throws -> HTTPResponse
}

extension HTTPClient: MastodonTransport {}
