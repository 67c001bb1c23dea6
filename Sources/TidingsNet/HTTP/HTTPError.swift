import Foundation

/// An `HTTPError` describes why an HTTP call gave no usable result.
///
/// `description` names the method, host and path but never the query, headers or request body, so a
/// token can never leak through an error into a log. Catch by kind with `~=`.
public struct HTTPError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure, stable for `switch` and metrics.
    public enum Kind: String, Sendable, Equatable {
        /// The request never got a response: DNS, connect, TLS, reset (see ``underlyingDescription``).
        case transport
        /// No complete response within the request's timeout.
        case timedOut
        /// The server answered with a status outside 200–299 (see ``status`` and ``serverMessage``).
        case status
        /// The body was not the expected JSON (see ``codingPath``).
        case decoding
        /// The request could not be built (bad URL, unencodable body).
        case invalidRequest
    }

    /// What went wrong.
    public let kind: Kind
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
        _ kind: Kind, request: HTTPRequest, status: Int? = nil, serverMessage: String? = nil,
        response: HTTPResponse? = nil, codingPath: String? = nil, underlying: String? = nil
    ) {
        self.kind = kind
        self.method = request.method.rawValue
        self.target = request.url.redactedForLogs
        self.status = status
        self.serverMessage = serverMessage
        self.response = response
        self.codingPath = codingPath
        self.underlyingDescription = underlying
    }

    public var description: String {
        var text = "HTTPError.\(kind.rawValue): \(method) \(target)"
        if let status { text += " → \(status)" }
        if let serverMessage { text += ": \(serverMessage)" }
        if let codingPath { text += " at \(codingPath.isEmpty ? "<root>" : codingPath)" }
        if let underlyingDescription { text += " (\(underlyingDescription))" }
        return text
    }

    /// Matches an error of the given kind.
    public static func ~= (pattern: Kind, error: HTTPError) -> Bool { error.kind == pattern }
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
