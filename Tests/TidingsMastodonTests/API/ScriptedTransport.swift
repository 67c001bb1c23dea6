import Foundation
import TidingsCore
import TidingsNet

@testable import TidingsMastodon

/// A transport that answers from a closure and remembers every request it was sent, for API client
/// tests that need exact control of the server's answers.
final class ScriptedTransport: MastodonTransport {
    typealias Answer = @Sendable (HTTPRequest) -> (status: Int, headers: HTTPHeaders, body: String)
    private let state: LockedState<[HTTPRequest]> = LockedState([])
    private let answer: Answer

    init(_ answer: @escaping Answer) { self.answer = answer }

    /// Every request sent so far, in order.
    var requests: [HTTPRequest] { state.withLock { $0 } }

    func response(for request: HTTPRequest) async throws -> HTTPResponse {
        state.withLock { $0.append(request) }
        let (status, headers, body) = answer(request)
        return HTTPResponse(status: status, headers: headers, body: Data(body.utf8), url: request.url)
    }

    static let server = URL(string: "https://social.example")!

    func client(
        token: String = "secret-token", budget: RateBudget? = nil, now: @escaping @Sendable () -> Date = { Date() }
    )
        -> MastodonAPIClient
    {
        MastodonAPIClient(
            server: Self.server, accountKey: "alice@social.example", authorization: MastodonAuthorization(token: token),
            transport: self, budget: budget, now: now)
    }
}

extension HTTPRequest {
    /// The query items of the request's URL.
    var queryItems: [URLQueryItem] { URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? [] }
}
