import Foundation
import TidingsCore
import TidingsNet

/// One HTTP/1.1 request as a sandbox handler sees it, whether it came in process or over a socket.
///
/// Guarantees: the header names keep their case but look-ups ignore it (`TidingsNet/HTTPHeaders`);
/// the body is the decoded body (chunked requests are de-chunked); the accessors for JSON, forms,
/// cookies and multipart throw ``SandboxHTTPError`` on bad input instead of trapping.
public struct SandboxHTTPRequest: Sendable {
    /// The method, upper-case (`GET`).
    public var method: String
    /// The path, percent-decoded, without the query (`/api/v1/statuses/1`).
    public var path: String
    /// The query's fields in order, percent-decoded.
    public var query: [(name: String, value: String)]
    /// The header fields.
    public var headers: HTTPHeaders
    /// The body bytes.
    public var body: Data
    /// Values of the route's `:name` segments, filled in by ``SandboxHTTPRouter``.
    public var pathParameters: [String: String] = [:]

    /// A request for `method` and `target` (`/path?x=1`), as the socket server and in-process callers build it.
    public init(method: String, target: String, headers: HTTPHeaders = HTTPHeaders(), body: Data = Data()) {
        self.method = method.uppercased()
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let rawPath = parts.first.map(String.init) ?? "/"
        self.path = rawPath.removingPercentEncoding ?? rawPath
        self.query = parts.count > 1 ? Self.formFields(String(parts[1])) : []
        self.headers = headers
        self.body = body
    }

    /// The first query value named `name`.
    public func queryValue(_ name: String) -> String? { query.first { $0.name == name }?.value }

    /// The cookies the client sent (`Cookie:`), by name.
    public var cookies: [String: String] {
        var result: [String: String] = [:]
        for header in headers.values(for: "Cookie") {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { continue }
                result[parts[0].trimmingCharacters(in: .whitespaces)] = parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return result
    }

    /// The bearer token of `Authorization: Bearer …`, if any.
    public var bearerToken: String? {
        guard let value = headers["Authorization"], value.hasPrefix("Bearer ") else { return nil }
        return String(value.dropFirst("Bearer ".count))
    }

    /// The body decoded as JSON.
    ///
    /// - Throws: ``SandboxHTTPError`` (`badBody`) when it is not `T`.
    public func json<T: Decodable>(_ type: T.Type, decoder: JSONDecoder = JSONDecoder()) throws -> T {
        do { return try decoder.decode(type, from: body) } catch {
            throw SandboxHTTPError(.badBody, detail: "the body is not \(T.self) as JSON")
        }
    }

    /// The fields of an `application/x-www-form-urlencoded` body, in order.
    public var formFields: [(name: String, value: String)] { Self.formFields(String(decoding: body, as: UTF8.self)) }

    /// The parts of a `multipart/form-data` body.
    ///
    /// - Throws: ``SandboxHTTPError`` (`badBody`) when the content type has no boundary or a part is malformed.
    public func multipartParts() throws -> [SandboxMultipartPart] {
        guard let type = headers["Content-Type"], type.lowercased().hasPrefix("multipart/form-data"),
            let range = type.range(of: "boundary=")
        else { throw SandboxHTTPError(.badBody, detail: "not multipart/form-data with a boundary") }
        var boundary = String(type[range.upperBound...])
        if let semicolon = boundary.firstIndex(of: ";") { boundary = String(boundary[..<semicolon]) }
        boundary = boundary.trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
        return try SandboxMultipartPart.parse(body, boundary: boundary)
    }

    static func formFields(_ text: String) -> [(name: String, value: String)] {
        text.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring) -> String {
                let spaced = part.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }
}

/// A bad request the sandbox refuses with a status, never a trap.
///
/// It is a `TidingsError` (TidingsCore): compare by kind (`error == .badBody`) or catch by kind
/// (`catch SandboxHTTPError.tooLarge`); ``status`` is the status a server answers.
public struct SandboxHTTPError: TidingsError {
    /// The kinds of bad request; not public, so a new kind breaks no caller's `switch`.
    package enum Code: String, Sendable {
        case badRequest, tooLarge, badBody, lengthRequired
    }

    /// What was wrong (inside the package; callers compare with the static members).
    package let code: Code
    /// Why, for logs and the response body; never holds request data.
    public let detail: String

    /// An error of the kind `kind`.
    package init(_ kind: Code, detail: String) {
        self.code = kind
        self.detail = detail
    }

    /// The kind of failure (compare with the static members, e.g. `error == .badBody`).
    public var kind: TidingsErrorKind { TidingsErrorKind(code) }

    /// The request line or a header field is malformed (400).
    public static let badRequest = SandboxHTTPError(.badRequest, detail: "")
    /// The head or body exceeds the server's limits (413 / 431).
    public static let tooLarge = SandboxHTTPError(.tooLarge, detail: "")
    /// The body does not decode as the handler expects (400).
    public static let badBody = SandboxHTTPError(.badBody, detail: "")
    /// The body has no `Content-Length` (a chunked request body, which the sandbox does not take: 411).
    public static let lengthRequired = SandboxHTTPError(.lengthRequired, detail: "")

    /// A `badBody` error saying why, for a handler that refuses a body it cannot use.
    public static func badBody(_ detail: String) -> SandboxHTTPError { SandboxHTTPError(.badBody, detail: detail) }

    /// The status a server answers for it.
    public var status: Int {
        switch code {
        case .badRequest, .badBody: 400
        case .tooLarge: 413
        case .lengthRequired: 411
        }
    }

    /// `badBody: …`.
    public var description: String { "\(code.rawValue): \(detail)" }
}
