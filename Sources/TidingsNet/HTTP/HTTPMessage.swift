import Foundation
import TidingsCore

/// An HTTP method.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable {
    /// The method name as sent.
    public let rawValue: String
    /// Creates a method from its name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// GET.
    public static let get = HTTPMethod(rawValue: "GET")
    /// POST.
    public static let post = HTTPMethod(rawValue: "POST")
    /// PUT.
    public static let put = HTTPMethod(rawValue: "PUT")
    /// PATCH.
    public static let patch = HTTPMethod(rawValue: "PATCH")
    /// DELETE.
    public static let delete = HTTPMethod(rawValue: "DELETE")
    /// HEAD.
    public static let head = HTTPMethod(rawValue: "HEAD")
}

/// Ordered HTTP header fields with case-insensitive lookup.
public struct HTTPHeaders: Sendable, Equatable, ExpressibleByDictionaryLiteral, Sequence {
    private var fields: [(name: String, value: String)] = []

    /// Creates empty headers.
    public init() {}

    /// Creates headers from literal pairs.
    public init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { add(name: name, value: value) }
    }

    /// Adds a field, keeping any existing field of the same name.
    public mutating func add(name: String, value: String) { fields.append((name, value)) }

    /// Replaces every field named `name` by one with `value`, or removes them for `nil`.
    public subscript(name: String) -> String? {
        get { fields.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value }
        set {
            fields.removeAll { $0.name.caseInsensitiveCompare(name) == .orderedSame }
            if let newValue { fields.append((name, newValue)) }
        }
    }

    /// Every value of fields named `name`, in order.
    public func values(for name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.map { [$0.name.lowercased(), $0.value] } == rhs.fields.map { [$0.name.lowercased(), $0.value] }
    }
}

/// One HTTP request: method, URL, headers, body and limits.
///
/// A bearer token goes in ``bearerToken``: the client sends it as `Authorization: Bearer …`, never
/// logs it, and drops it when a redirect leaves the original host.
public struct HTTPRequest: Sendable {
    /// The method.
    public var method: HTTPMethod
    /// The URL. Keep secrets out of it: URLs end up in logs and error messages (without the query).
    public var url: URL
    /// Extra headers.
    public var headers: HTTPHeaders
    /// The body, already encoded; see the `json`, `form` and `multipart` builders.
    public var body: Data?
    /// An OAuth bearer token for the `Authorization` header.
    ///
    /// - Warning: a secret; Tidings never logs it or puts it in an error.
    public var bearerToken: String?
    /// This request's limit for the whole exchange; `nil` uses the client's default.
    public var timeout: Duration?
    /// Whose rate budget the request draws on (see `RateBudget`): a stable account identifier
    /// that is not a secret, such as `"alice@mastodon.social"` (never the token); `nil` for none.
    public var rateLimitAccount: String?
    /// The endpoint family the server meters this request in, e.g.
    /// `RateLimitFamily.mastodon(method:path:)` for Mastodon.
    public var rateLimitFamily: RateLimitFamily = .default

    /// Creates a request.
    public init(
        method: HTTPMethod = .get, url: URL, headers: HTTPHeaders = [:], body: Data? = nil,
        bearerToken: String? = nil, timeout: Duration? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.bearerToken = bearerToken
        self.timeout = timeout
    }

    /// A request whose body is `value` encoded as JSON (`Content-Type: application/json`).
    ///
    /// - Throws: ``HTTPError`` `invalidRequest` when `value` cannot be encoded.
    public static func json(
        _ method: HTTPMethod, url: URL, body value: some Encodable, encoder: JSONEncoder = JSONEncoder()
    ) throws -> HTTPRequest {
        var request = HTTPRequest(method: method, url: url)
        do {
            request.body = try encoder.encode(value)
        } catch {
            throw HTTPError(.invalidRequest, request: request, underlying: "JSON encoding failed: \(error)")
        }
        request.headers["Content-Type"] = "application/json"
        return request
    }

    /// A request with an `application/x-www-form-urlencoded` body of `fields`, in order.
    public static func form(_ method: HTTPMethod = .post, url: URL, fields: [(String, String)]) -> HTTPRequest {
        var request = HTTPRequest(method: method, url: url, body: Data(FormURLEncoding.encode(fields).utf8))
        request.headers["Content-Type"] = "application/x-www-form-urlencoded"
        return request
    }

    /// A request with a `multipart/form-data` body.
    public static func multipart(_ method: HTTPMethod = .post, url: URL, form: MultipartFormData) -> HTTPRequest {
        var request = HTTPRequest(method: method, url: url, body: form.encoded())
        request.headers["Content-Type"] = form.contentType
        return request
    }
}

/// A complete HTTP response.
public struct HTTPResponse: Sendable {
    /// The status code.
    public var status: Int
    /// The response headers.
    public var headers: HTTPHeaders
    /// The whole body.
    public var body: Data
    /// The URL that answered (after redirects).
    public var url: URL

    /// Creates a response (used by the client and by tests).
    public init(status: Int, headers: HTTPHeaders, body: Data, url: URL) {
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200...299).contains(status) }

    /// The `Link` header's targets by relation (`next`, `prev`, …), resolved against ``url``.
    public var links: [String: URL] { LinkHeader.parse(headers.values(for: "Link").joined(separator: ","), base: url) }

    /// The rate-limit headers of this response, for `RateBudget.record(_:host:account:family:)`.
    public var rateLimitSignal: RateLimitSignal {
        RateLimitSignal(
            statusCode: status, retryAfter: headers["Retry-After"], limit: headers["X-RateLimit-Limit"],
            remaining: headers["X-RateLimit-Remaining"], reset: headers["X-RateLimit-Reset"], date: headers["Date"])
    }

    /// `Retry-After` as a duration (delta-seconds or HTTP-date), when present and valid, at most `maximum`.
    ///
    /// An HTTP-date is measured against the response's own `Date` header when it has a readable one, so
    /// a skewed local clock cannot stretch the wait; `now` stands in otherwise. A hostile or confused
    /// server cannot ask for more than `maximum` (one hour unless told otherwise).
    public func retryAfter(now: Date, maximum: Duration = .seconds(3600)) -> Duration? {
        let serverNow = headers["Date"].flatMap { HTTPDate.parse($0) } ?? now
        return headers["Retry-After"].flatMap { RetryAfter.parse($0, now: serverNow) }.map { min($0, maximum) }
    }

    /// The body decoded as JSON.
    ///
    /// - Throws: ``HTTPError`` `decoding` with the coding path of the bad field.
    public func decode<T: Decodable>(_ type: T.Type, decoder: JSONDecoder = JSONDecoder(), request: HTTPRequest) throws
        -> T
    {
        do {
            return try decoder.decode(type, from: body)
        } catch let error as DecodingError {
            let (path, detail) = Self.explain(error)
            throw HTTPError(.decoding, request: request, status: status, codingPath: path, underlying: detail)
        } catch {
            throw HTTPError(.decoding, request: request, status: status, codingPath: "", underlying: "\(error)")
        }
    }

    private static func explain(_ error: DecodingError) -> (String, String) {
        switch error {
        case .typeMismatch(let type, let context):
            (describeCodingPath(context.codingPath), "expected \(type)")
        case .valueNotFound(let type, let context):
            (describeCodingPath(context.codingPath), "missing \(type) value")
        case .keyNotFound(let key, let context):
            (describeCodingPath(context.codingPath + [key]), "missing key")
        case .dataCorrupted(let context):
            (describeCodingPath(context.codingPath), "malformed: \(context.debugDescription)")
        @unknown default:
            ("", "\(error)")
        }
    }

    /// The server's explanation for an error status: JSON `error`/`message`, else up to 200
    /// characters of text.
    var serverMessage: String? {
        if let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] {
            for key in ["error", "message", "error_description"] {
                if let text = object[key] as? String { return text }
            }
        }
        let text = String(decoding: body.prefix(200), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }
}

/// The syntax of header fields (RFC 9110 §5), checked on bytes: a Swift `Character` comparison
/// misses `"\r\n"`, which is one grapheme equal to neither `"\r"` nor `"\n"`.
enum HTTPFieldSyntax {
    /// Whether `name` is a non-empty token (letters, digits and ``!#$%&'*+-.^_`|~``).
    static func isValidName(_ name: String) -> Bool {
        !name.utf8.isEmpty && name.utf8.allSatisfy(isTokenByte)
    }

    /// Whether `value` has no control byte but horizontal tab (so no CR, LF or NUL).
    static func isValidValue(_ value: String) -> Bool {
        value.utf8.allSatisfy { $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }
    }

    /// Whether `byte` may appear in a token (RFC 9110 §5.6.2).
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }
}
