import Foundation
import TidingsCore
import TidingsNet

/// ``OpenMatesPrefetchTransport`` over TidingsNet's `HTTPClient`: `POST <origin>/v1/sync/offline-prefetch` with
/// a JSON body and the session in the `auth_refresh_token` cookie, never in the URL or a log.
///
/// The prefetcher paces requests with its own rate budget, so the `HTTPClient` given here should have none
/// (a budget on both would count every request twice).
///
/// For example:
/// ```swift
/// let transport = try OpenMatesPrefetchHTTPTransport(
///     origin: URL(string: "https://api.openmates.org")!, refreshToken: token)
/// ```
public struct OpenMatesPrefetchHTTPTransport: OpenMatesPrefetchTransport {
    /// The endpoint's URL.
    public let url: URL
    /// The origin's host.
    public let host: String
    let refreshToken: String
    let client: HTTPClient

    /// A transport for the server at `origin` (`http(s)://host[:port]`).
    ///
    /// - Throws: ``OpenMatesPrefetchError/invalidConfiguration`` when `origin` is not an http(s) URL with a host,
    ///   or the token cannot travel in a cookie (the token is never named in the error).
    public init(origin: URL, refreshToken: String, client: HTTPClient = HTTPClient()) throws(OpenMatesPrefetchError) {
        guard let scheme = origin.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = origin.host, !host.isEmpty,
            let url = URL(string: OpenMatesPrefetchRequest.path, relativeTo: origin)?.absoluteURL
        else { throw OpenMatesPrefetchError(.invalidConfiguration, detail: "not an http(s) origin") }
        // A cookie value is a token: no separators, no controls, no spaces.
        guard !refreshToken.isEmpty, refreshToken.unicodeScalars.allSatisfy(Self.isCookieValueScalar) else {
            throw OpenMatesPrefetchError(.invalidConfiguration, detail: "the refresh token cannot be sent as a cookie")
        }
        self.url = url
        self.host = host
        self.refreshToken = refreshToken
        self.client = client
    }

    /// RFC 6265's cookie-octet: visible ASCII but for `"`, `,`, `;` and `\\`.
    static func isCookieValueScalar(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value > 0x20 && scalar.value < 0x7F && !"\";,\\".unicodeScalars.contains(scalar)
    }

    /// Sends the request with its JSON body and the session cookie, bounded by `timeout`.
    public func post(_ request: OpenMatesPrefetchRequest, timeout: Duration) async throws -> OpenMatesPrefetchReply {
        var http = HTTPRequest(
            method: .post, url: url,
            headers: [
                "Content-Type": "application/json", "Accept": "application/json",
                "Cookie": "auth_refresh_token=\(refreshToken)",
            ],
            body: request.body)
        http.timeout = timeout
        let response = try await client.response(for: http)
        var headers: [String: String] = [:]
        for (name, value) in response.headers { headers[name] = value }
        return OpenMatesPrefetchReply(status: response.status, headers: headers, body: response.body)
    }
}
