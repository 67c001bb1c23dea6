import Foundation
import TidingsCore
import TidingsMastodon
import TidingsNet

/// A transport that counts what the command sent, for its summary: how many requests, and how many timeline
/// requests asked only for what is newer than the store (`min_id`). It never keeps a URL or a header, so
/// nothing it holds can leak a token.
final class MastodonCountingTransport: MastodonTransport {
    private let inner: any MastodonTransport
    private let counts = LockedState((requests: 0, minID: 0))

    init(_ inner: any MastodonTransport) { self.inner = inner }

    /// Requests sent so far, and those of them carrying `min_id`.
    var snapshot: (requests: Int, minID: Int) { counts.withLock { ($0.requests, $0.minID) } }

    func response(for request: HTTPRequest) async throws -> HTTPResponse {
        let hasMinID =
            URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems?
            .contains { $0.name == "min_id" } ?? false
        counts.withLock {
            $0.requests += 1
            if hasMinID { $0.minID += 1 }
        }
        return try await inner.response(for: request)
    }
}
