import Foundation
import TidingsCore

/// An `HTTPClient` sends requests with its own connections and its own cookies.
///
/// On Linux the requests go over TidingsNet's own HTTP/1.1 transport (TCP and OpenSSL TLS on the
/// epoll reactor, a small keep-alive pool per origin), so nothing links FoundationNetworking or
/// libcurl; on Apple platforms, where TidingsNet has no TLS of its own, over the client's own
/// `URLSession`. The guarantees below hold for both.
///
/// Guarantees:
/// - Cookies live in ``cookies``, private to this client: two clients (two accounts) never share a
///   session, and `HTTPCookieStorage.shared` is never touched. Redirect responses' cookies are kept too.
/// - A request's ``HTTPRequest/bearerToken`` goes only into the `Authorization` header, is dropped
///   when a redirect leaves the request's host, and never appears in a log record or an error.
/// - Redirects (301, 302, 303, 307, 308) are followed, at most ``maximumRedirects`` of them: 303 turns
///   any method but HEAD into a GET without body, 301 and 302 turn a POST into one, 307 and 308 keep
///   method and body. Each hop carries the jar's cookies for its own URL.
/// - Each call (connection, TLS handshake, request, every hop, response) is bounded by its timeout,
///   measured on the configured clock, and honours task cancellation (`CancellationError`).
/// - No `Accept-Encoding` is sent: bodies arrive uncompressed, as the size limit counts them.
/// - With a ``Configuration/rateBudget``, every request first waits for its host's and its scope's
///   budget (``HTTPRequest/rateLimitAccount``, ``HTTPRequest/rateLimitFamily``) and every response
///   (429 and `Retry-After`, `X-RateLimit-*`) is recorded into that scope.
///
/// For example:
///
/// ```swift
/// let client = HTTPClient(configuration: .init(rateBudget: budget))
/// var request = HTTPRequest(url: URL(string: "https://mastodon.social/api/v1/timelines/home")!)
/// request.bearerToken = token
/// let statuses = try await client.decode([Status].self, from: request)
/// ```
public final class HTTPClient: Sendable {
    /// Settings shared by every request of one client.
    public struct Configuration: Sendable {
        /// The limit for one exchange when the request sets none.
        public var timeout: Duration
        /// The `User-Agent` header, unless a request sets its own.
        public var userAgent: String?
        /// The budget to wait on before and to inform after each request; `nil` for none.
        public var rateBudget: RateBudget?
        /// The clock for timeouts.
        public var clock: any Clock<Duration>
        /// The current date, for cookie expiry and `Retry-After` dates.
        public var now: @Sendable () -> Date
        /// Where request summaries go (method, host and path, status; never headers, query or body).
        public var logger: TidingsLogger
        /// The largest response body accepted, in bytes; a larger one fails with
        /// ``HTTPError/transport``.
        ///
        /// A `Content-Length` past the limit fails as soon as the header arrives, before the body is
        /// read; a body of unknown length is checked as it arrives: the caller is answered and the
        /// transfer cancelled as soon as it is passed, so the download's memory stays near the limit
        /// too, however large the body. (On Apple platforms URLSession may go on reading from the
        /// socket for a while before the cancellation takes effect; what it reads is dropped.)
        public var maximumResponseSize: Int

        /// The defaults: 30 s timeout, `Tidings` user agent, no budget, the continuous clock.
        public init(
            timeout: Duration = .seconds(30),
            userAgent: String? = "Tidings",
            rateBudget: RateBudget? = nil,
            clock: any Clock<Duration> = ContinuousClock(),
            now: @escaping @Sendable () -> Date = { Date() },
            logger: TidingsLogger = .disabled,
            maximumResponseSize: Int = 32 * 1024 * 1024
        ) {
            self.maximumResponseSize = max(0, maximumResponseSize)
            self.timeout = timeout
            self.userAgent = userAgent
            self.rateBudget = rateBudget
            self.clock = clock
            self.now = now
            self.logger = logger
        }
    }

    /// The most redirects one call follows; one more fails with ``HTTPError/transport``.
    public static let maximumRedirects = 16

    /// This client's cookies.
    public let cookies: HTTPCookieJar
    let configuration: Configuration
    let logger: TidingsLogger
    #if TIDINGS_OPENSSL
        let transport: HTTP1Transport
    #else
        let session: URLSession
        let delegate: HTTPSessionDelegate
    #endif

    /// Body bytes received so far, over all this client's requests, counted as they arrive (for tests
    /// of ``Configuration/maximumResponseSize``).
    package var bodyBytesReceived: Int {
        #if TIDINGS_OPENSSL
            transport.bodyBytesReceived
        #else
            delegate.bytesReceived
        #endif
    }

    /// Creates a client with an empty cookie jar.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        self.logger = configuration.logger.scoped("http")
        let cookies = HTTPCookieJar(now: configuration.now)
        self.cookies = cookies
        #if TIDINGS_OPENSSL
            transport = HTTP1Transport()
        #else
            (session, delegate) = Self.makeSession(cookies: cookies)
        #endif
    }

    #if !TIDINGS_OPENSSL
        deinit { session.finishTasksAndInvalidate() }
    #endif

    /// Sends `request` and returns the response, whatever its status.
    ///
    /// - Throws: ``HTTPError`` `transport`, `timedOut`, `invalidRequest`; `CancellationError`.
    public func response(for request: HTTPRequest) async throws -> HTTPResponse {
        guard let host = request.url.host?.lowercased(), let scheme = request.url.scheme?.lowercased(),
            scheme == "http" || scheme == "https"
        else { throw HTTPError(.invalidRequest, request: request, underlying: "not an http(s) URL") }
        try validateFields(of: request)
        if let budget = configuration.rateBudget {
            try await budget.acquire(host: host, account: request.rateLimitAccount, family: request.rateLimitFamily)
        }
        let timeout = request.timeout ?? configuration.timeout
        let response: HTTPResponse
        do {
            response = try await withTimeout(
                timeout, clock: configuration.clock,
                timeoutError: { HTTPError(.timedOut, request: request, underlying: "no response within \(timeout)") }
            ) { [self] in
                try await perform(request)
            }
        } catch let error as HTTPError {
            logger.notice("\(request.method.rawValue) \(request.url.redactedForLogs) failed: \(error.kind.name)")
            throw error
        }
        cookies.store(setCookieHeaders: response.headers.values(for: "Set-Cookie"), from: response.url)
        if let budget = configuration.rateBudget {
            await budget.record(
                response.rateLimitSignal, host: host, account: request.rateLimitAccount, family: request.rateLimitFamily
            )
        }
        logger.debug("\(request.method.rawValue) \(request.url.redactedForLogs) → \(response.status)")
        return response
    }

    /// Sends `request` and returns a 2xx response.
    ///
    /// - Throws: ``HTTPError`` `status` (with the server's message) for any other status, and
    ///   everything ``response(for:)`` throws.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let response = try await response(for: request)
        guard response.isSuccess else {
            throw HTTPError(
                .status, request: request, status: response.status, serverMessage: response.serverMessage,
                response: response)
        }
        return response
    }

    /// Sends `request` and decodes the 2xx response's JSON body.
    ///
    /// - Throws: ``HTTPError`` `decoding` with the coding path of the bad field, and everything
    ///   ``send(_:)`` throws.
    public func decode<T: Decodable>(_ type: T.Type, from request: HTTPRequest, decoder: JSONDecoder = JSONDecoder())
        async throws -> T
    {
        let response = try await send(request)
        return try response.decode(type, decoder: decoder, request: request)
    }

    /// Refuses a header, token or user agent that would break out of its header line.
    private func validateFields(of request: HTTPRequest) throws {
        for (name, value) in request.headers
        where !HTTPFieldSyntax.isValidName(name) || !HTTPFieldSyntax.isValidValue(value) {
            // The value may be a secret: name the header only when the name itself is well-formed.
            let label = HTTPFieldSyntax.isValidName(name) ? "header \(name)" : "a header name"
            throw HTTPError(.invalidRequest, request: request, underlying: "\(label) has a forbidden character")
        }
        if let token = request.bearerToken, !HTTPFieldSyntax.isValidValue(token) {
            throw HTTPError(.invalidRequest, request: request, underlying: "the bearer token has a forbidden character")
        }
        if let userAgent = configuration.userAgent, !HTTPFieldSyntax.isValidValue(userAgent) {
            throw HTTPError(.invalidRequest, request: request, underlying: "the user agent has a forbidden character")
        }
    }

    /// Splits a comma-joined `Set-Cookie` value at commas that start a new `name=` pair, leaving
    /// commas inside `Expires` dates alone.
    static func splitSetCookie(_ combined: String) -> [String] {
        var result: [String] = []
        var current = ""
        var index = combined.startIndex
        while index < combined.endIndex {
            let character = combined[index]
            if character == ",", startsCookiePair(combined[combined.index(after: index)...]) {
                result.append(current.trimmingCharacters(in: .whitespaces))
                current = ""
            } else {
                current.append(character)
            }
            index = combined.index(after: index)
        }
        let last = current.trimmingCharacters(in: .whitespaces)
        if !last.isEmpty { result.append(last) }
        return result
    }

    private static func startsCookiePair(_ text: Substring) -> Bool {
        let trimmed = text.drop { $0 == " " }
        guard let equals = trimmed.firstIndex(of: "=") else { return false }
        let name = trimmed[..<equals]
        return !name.isEmpty && !name.contains { $0 == " " || $0 == ";" || $0 == "," }
    }
}

extension HTTPClient {
    /// Whether a redirect hop from `from` to `to` may keep the `Authorization` header of a request
    /// first sent to `original`.
    ///
    /// The token belongs to one origin: a hop that changes the scheme (https → http would expose it
    /// on the wire), the host or the port loses it, and so does every later hop, even one back home.
    static func redirectKeepsAuthorization(original: URL?, from: URL?, to: URL) -> Bool {
        guard let original, let from else { return false }
        let home = origin(original)
        return origin(from) == home && origin(to) == home
    }

    /// Scheme, host and port (the scheme's default when none is given), lower-cased.
    static func origin(_ url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }
}
