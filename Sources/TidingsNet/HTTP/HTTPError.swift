import Foundation
import TidingsCore

/// An `HTTPError` describes why an HTTP call gave no usable result.
///
/// `description` names the method, host and path but never the query, headers or request body, so a
/// token can never leak through an error into a log. It is a `TidingsError` (TidingsCore): catch by kind
/// (`catch HTTPError.timedOut`) or compare (`error == .status`).
public struct HTTPError: TidingsError {
    /// The kinds of failure; not public, so a new kind breaks no caller's `switch`.
    package enum Code: String, Sendable {
        case transport, timedOut, status, decoding, invalidRequest
    }

    /// What went wrong (inside the package; callers compare with the static members).
    package let code: Code
    /// The method of the failed request.
    public let method: String
    /// `scheme://host[:port]/path` of the request — the query is left out on purpose.
    public let target: String
    /// The HTTP status, for `.status` (and `.decoding`, which follows a successful status).
    public let status: Int?
    /// The server's explanation: the JSON `error` (or `message`) field, else the start of the body.
    public let serverMessage: String?
    /// The response of a `.status` failure, for headers such as `Retry-After`.
    public let response: HTTPResponse?
    /// Where decoding failed, e.g. `statuses[3].account.id`.
    public let codingPath: String?
    /// The system's or decoder's explanation.
    public let underlyingDescription: String?

    init(
        _ kind: Code, request: HTTPRequest, status: Int? = nil, serverMessage: String? = nil,
        response: HTTPResponse? = nil, codingPath: String? = nil, underlying: String? = nil
    ) {
        self.init(
            kind, method: request.method.rawValue, target: request.url.redactedForLogs, status: status,
            serverMessage: serverMessage, response: response, codingPath: codingPath, underlying: underlying)
    }

    private init(
        _ kind: Code, method: String, target: String, status: Int? = nil, serverMessage: String? = nil,
        response: HTTPResponse? = nil, codingPath: String? = nil, underlying: String? = nil
    ) {
        self.code = kind
        self.method = method
        self.target = target
        self.status = status
        self.serverMessage = serverMessage
        self.response = response
        self.codingPath = codingPath
        self.underlyingDescription = underlying
    }

    /// The kind of failure (compare with the static members, e.g. `error == .status`).
    public var kind: TidingsErrorKind { TidingsErrorKind(code) }

    /// The request never got a response: DNS, connect, TLS, reset (see ``underlyingDescription``).
    public static let transport = HTTPError(.transport, method: "", target: "")
    /// No complete response within the request's timeout.
    public static let timedOut = HTTPError(.timedOut, method: "", target: "")
    /// The server answered with a status outside 200–299 (see ``status`` and ``serverMessage``).
    public static let status = HTTPError(.status, method: "", target: "")
    /// The body was not the expected JSON (see ``codingPath``).
    public static let decoding = HTTPError(.decoding, method: "", target: "")
    /// The request could not be built (bad URL, unencodable body).
    public static let invalidRequest = HTTPError(.invalidRequest, method: "", target: "")

    /// The kind, method, target without query, status, server message, coding path and underlying
    /// explanation; never headers or bodies.
    public var description: String {
        var text = "\(shortDescription): \(method) \(target)"
        if let status { text += " → \(status)" }
        if let serverMessage { text += ": \(serverMessage)" }
        if let codingPath { text += " at \(codingPath.isEmpty ? "<root>" : codingPath)" }
        if let underlyingDescription { text += " (\(underlyingDescription))" }
        return text
    }
}

extension URL {
    /// The URL without query, fragment or user info: safe for logs and error messages.
    var redactedForLogs: String {
        guard var components = URLComponents(url: self, resolvingAgainstBaseURL: false) else { return "<url>" }
        components.query = nil
        components.fragment = nil
        components.user = nil
        components.password = nil
        return components.string ?? "<url>"
    }
}

/// Renders a decoding path as `items[3].account.id`.
func describeCodingPath(_ path: [any CodingKey]) -> String {
    var text = ""
    for key in path {
        if let index = key.intValue {
            text += "[\(index)]"
        } else {
            text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
        }
    }
    return text
}
