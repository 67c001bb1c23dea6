import Foundation
import TidingsCore
import TidingsNet

/// `MastodonAPIClient` talks to one account's Mastodon-API server (Mastodon, GoToSocial, Pleroma,
/// Nextcloud Social) and turns every answer into a wire type or a ``MastodonError``.
///
/// Guarantees:
/// - The token goes only into the `Authorization: Bearer` header; never into a URL, a log or an error.
/// - Before each request it waits for the account's `RateBudget` scope (host, ``accountKey``,
///   `RateLimitFamily.mastodon(method:path:)`) and records every response into it, so a 429's
///   `Retry-After` and `X-RateLimit-*` pace the next requests of the same account and family.
/// - A 401 moves ``authorization`` to `needsReauthentication`; from then on every call fails with
///   ``MastodonError/needsReauthentication`` without sending anything, until the app signs in again.
/// - Lists decode element by element (one bad element never fails a page) and carry the `Link`
///   header's older/newer ranges.
public struct MastodonAPIClient: Sendable {
    /// The server's base URL (`https://mastodon.social`).
    public let server: URL
    /// A stable, non-secret name of the account (`alice@mastodon.social`): the rate budget's scope.
    public let accountKey: String
    /// The account's token and state.
    public let authorization: MastodonAuthorization
    private let transport: any MastodonTransport
    private let budget: RateBudget?
    private let now: @Sendable () -> Date

    /// A client for one account.
    ///
    /// - Parameters:
    ///   - server: The base URL; paths are appended to it.
    ///   - accountKey: The budget scope; never the token.
    ///   - authorization: The account's token holder, shared with everything else acting as that account.
    ///   - transport: `HTTPClient` (without a budget of its own) or an in-process transport.
    ///   - budget: Waited on before and informed after every request; nil for none.
    ///   - now: The current date, for `Retry-After` dates.
    public init(
        server: URL, accountKey: String, authorization: MastodonAuthorization, transport: any MastodonTransport,
        budget: RateBudget? = nil, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.server = server
        self.accountKey = accountKey
        self.authorization = authorization
        self.transport = transport
        self.budget = budget
        self.now = now
    }

    /// The budget every request waits for and informs (nil: none).
    public var rateBudget: RateBudget? { budget }

    /// This client with `budget` as its rate budget (same server, account, token holder and transport).
    public func withRateBudget(_ budget: RateBudget?) -> MastodonAPIClient {
        MastodonAPIClient(
            server: server, accountKey: accountKey, authorization: authorization, transport: transport,
            budget: budget, now: now)
    }

    // MARK: - Requests

    /// Sends one request and returns its 2xx response. Package-visible so that the push subscription client
    /// (TidingsPush) sends through the same token, budget and error handling. `headers` are added as given
    /// (e.g. `Idempotency-Key`).
    ///
    /// - Throws: ``MastodonError`` for every failure, or `CancellationError`.
    package func send(
        _ method: HTTPMethod, _ path: String, query: [(String, String)] = [], form: [(String, String)]? = nil,
        headers: [(String, String)] = []
    ) async throws -> HTTPResponse {
        guard let token = authorization.currentToken else {
            throw MastodonError(.needsReauthentication, endpoint: path)
        }
        guard var components = URLComponents(url: server, resolvingAgainstBaseURL: false) else {
            throw MastodonError(.badRequest, endpoint: path, detail: "server URL")
        }
        let basePath = components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path
        components.percentEncodedPath = basePath + path
        components.queryItems = query.isEmpty ? nil : query.map { URLQueryItem(name: $0.0, value: $0.1) }
        // `+` in a query value would read as a space on the server.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        guard let url = components.url, let host = url.host else {
            throw MastodonError(.badRequest, endpoint: path, detail: "URL")
        }
        var request =
            form.map { HTTPRequest.form(method, url: url, fields: $0) } ?? HTTPRequest(method: method, url: url)
        request.bearerToken = token
        request.rateLimitAccount = accountKey
        request.rateLimitFamily = .mastodon(method: method.rawValue, path: path)
        request.headers.add(name: "Accept", value: "application/json")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let budget {
            try await budget.acquire(host: host, account: accountKey, family: request.rateLimitFamily)
        }
        let response: HTTPResponse
        do {
            response = try await transport.response(for: request)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            let detail = (error as? any TidingsError)?.shortDescription ?? "\(type(of: error))"
            throw MastodonError(.transport, endpoint: path, detail: detail)
        }
        if let budget {
            await budget.record(
                response.rateLimitSignal, host: host, account: accountKey, family: request.rateLimitFamily)
        }
        if response.isSuccess { return response }
        throw error(for: response, endpoint: path, token: token)
    }

    private func error(for response: HTTPResponse, endpoint: String, token: String) -> MastodonError {
        switch response.status {
        case 401:
            authorization.refuse(token: token)
            return MastodonError(.unauthorized, endpoint: endpoint, status: 401)
        case 404, 410: return MastodonError(.notFound, endpoint: endpoint, status: response.status)
        case 409: return MastodonError(.conflict, endpoint: endpoint, status: 409)
        case 429:
            let wait = response.retryAfter(now: now()).map { Double($0.components.seconds) }
            return MastodonError(.rateLimited, endpoint: endpoint, status: 429, retryAfterSeconds: wait)
        case 400, 422: return MastodonError(.badRequest, endpoint: endpoint, status: response.status)
        default: return MastodonError(.server, endpoint: endpoint, status: response.status)
        }
    }

    func get<T: Decodable>(_ type: T.Type, _ path: String, query: [(String, String)] = []) async throws -> T {
        let response = try await send(.get, path, query: query)
        return try MastodonWire.decode(T.self, from: response.body, endpoint: path)
    }

    func page<T: Decodable & Sendable>(
        _ type: T.Type, _ path: String, range: MastodonPageRange, extra: [(String, String)] = []
    )
        async throws -> MastodonPage<T>
    {
        let response = try await send(.get, path, query: extra + range.queryItems)
        let list = try MastodonWire.decodeList(T.self, from: response.body, endpoint: path)
        return MastodonPage(items: list.elements, skipped: list.skipped, response: response, limit: range.limit)
    }

    func post<T: Decodable>(_ type: T.Type, _ path: String, form: [(String, String)] = []) async throws -> T {
        let response = try await send(.post, path, form: form)
        return try MastodonWire.decode(T.self, from: response.body, endpoint: path)
    }
}
