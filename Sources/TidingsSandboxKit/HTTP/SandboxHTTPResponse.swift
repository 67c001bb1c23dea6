import Foundation
import TidingsNet

/// What a sandbox handler answers, in process or over a socket.
///
/// Guarantees: `Content-Length` is computed by the server (a handler never sets it); a response with
/// ``chunks`` is sent with `Transfer-Encoding: chunked`, one chunk per element; the helpers build the
/// headers backends' clients read (`Set-Cookie`, `Link`, `Retry-After`, `X-RateLimit-*`).
public struct SandboxHTTPResponse: Sendable {
    /// How the server ends the connection instead of answering normally (set by fault switches).
    public enum ConnectionFault: Sendable, Equatable {
        /// Send the head and this many body bytes, then cut the connection.
        case dropAfterBodyBytes(Int)
        /// Close the connection without sending anything.
        case closeWithoutAnswer
    }

    /// The status code.
    public var status: Int
    /// The header fields.
    public var headers: HTTPHeaders
    /// The body (ignored when ``chunks`` is set).
    public var body: Data
    /// When set, the body is sent chunked, one HTTP chunk per element.
    public var chunks: [Data]?
    /// Set by a fault switch: the connection is cut instead of the response completing.
    public var connectionFault: ConnectionFault?

    /// A response with `status`, `headers` and `body`.
    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The body's bytes as sent: the chunks joined, or ``body``.
    public var payload: Data { chunks.map { $0.reduce(into: Data()) { $0.append($1) } } ?? body }

    /// A plain-text response.
    public static func text(_ text: String, status: Int = 200) -> SandboxHTTPResponse {
        SandboxHTTPResponse(
            status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: Data(text.utf8))
    }

    /// A JSON response encoding `value`; a value that cannot be encoded gives a 500 naming its type.
    public static func json<T: Encodable>(_ value: T, status: Int = 200, encoder: JSONEncoder = JSONEncoder())
        -> SandboxHTTPResponse
    {
        guard let body = try? encoder.encode(value) else {
            return .text("cannot encode \(T.self)", status: 500)
        }
        return SandboxHTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: body)
    }

    /// Adds `Set-Cookie: name=value; Path=/; HttpOnly` (plus `Max-Age` when given).
    public mutating func setCookie(_ name: String, _ value: String, path: String = "/", maxAge: Int? = nil) {
        var field = "\(name)=\(value); Path=\(path); HttpOnly"
        if let maxAge { field += "; Max-Age=\(maxAge)" }
        headers.add(name: "Set-Cookie", value: field)
    }

    /// Adds a `Link` header with these relations (`next`, `prev`), as Mastodon paginates.
    public mutating func addLinks(_ links: [(rel: String, url: URL)]) {
        guard !links.isEmpty else { return }
        headers.add(
            name: "Link", value: links.map { "<\($0.url.absoluteString)>; rel=\"\($0.rel)\"" }.joined(separator: ", "))
    }

    /// Adds `X-RateLimit-Limit`, `-Remaining` and `-Reset` (an ISO 8601 instant).
    public mutating func addRateLimit(limit: Int, remaining: Int, reset: Date) {
        headers.add(name: "X-RateLimit-Limit", value: String(limit))
        headers.add(name: "X-RateLimit-Remaining", value: String(remaining))
        headers.add(name: "X-RateLimit-Reset", value: ISO8601DateFormatter().string(from: reset))
    }

    /// The standard reason phrase for a status (`OK`), or `Status` for codes it does not know.
    static func reason(_ status: Int) -> String {
        switch status {
        case 101: "Switching Protocols"
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 411: "Length Required"
        case 413: "Content Too Large"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: "Status"
        }
    }
}
