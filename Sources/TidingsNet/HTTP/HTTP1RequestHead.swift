import Foundation

/// The bytes of one HTTP/1.1 request as ``HTTPClient``'s own transport sends it.
///
/// Framing is the transport's alone: `Host`, `Content-Length`, `Transfer-Encoding`, `Connection`,
/// `Expect`, `Upgrade`, `TE` and `Keep-Alive` from the caller are left out, so no header can change
/// where this request ends or what the connection does next. `Accept-Encoding` is never sent, so
/// bodies arrive as the server stores them (no decompression, and the size limit counts real bytes).
enum HTTP1RequestHead {
    /// Header names the transport decides, compared lower-cased.
    static let framingHeaders: Set<String> = [
        "host", "content-length", "transfer-encoding", "connection", "expect", "upgrade", "te", "keep-alive",
        "accept-encoding", "proxy-connection",
    ]

    /// Why a request cannot be written.
    struct Refusal: Error {
        let reason: String
    }

    /// The request line, headers and body of `method` to `url`.
    ///
    /// - Parameters:
    ///   - fields: the header fields in order (already without secrets in any other place).
    ///   - body: the body; a `Content-Length` is sent for it, and `Content-Length: 0` for a POST, PUT or
    ///     PATCH without one.
    /// - Throws: ``Refusal`` for a method, target or field that would break out of its line.
    static func bytes(method: String, url: URL, fields: [(name: String, value: String)], body: Data?) throws(Refusal)
        -> [UInt8]
    {
        guard HTTPFieldSyntax.isValidName(method) else { throw Refusal(reason: "the method is not a token") }
        guard let host = url.host, !host.isEmpty else { throw Refusal(reason: "the URL has no host") }
        let target = requestTarget(of: url)
        // A target must be one visible word: a space, CR or LF would end the request line early.
        guard target.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw Refusal(reason: "the URL's path or query has a forbidden character")
        }
        var head = "\(method) \(target) HTTP/1.1\r\nHost: \(hostHeader(url, host: host))\r\n"
        var hasAccept = false
        for (name, value) in fields {
            guard HTTPFieldSyntax.isValidName(name), HTTPFieldSyntax.isValidValue(value) else {
                throw Refusal(reason: "a header name or value has a forbidden character")
            }
            let lower = name.lowercased()
            if framingHeaders.contains(lower) { continue }
            if lower == "accept" { hasAccept = true }
            head += "\(name): \(value)\r\n"
        }
        // What URLSession (libcurl) sent before, so servers see the same request.
        if !hasAccept { head += "Accept: */*\r\n" }
        let upper = method.uppercased()
        if let body {
            head += "Content-Length: \(body.count)\r\n"
        } else if upper == "POST" || upper == "PUT" || upper == "PATCH" {
            head += "Content-Length: 0\r\n"
        }
        head += "\r\n"
        var bytes = Array(head.utf8)
        if let body { bytes.append(contentsOf: body) }
        return bytes
    }

    /// The path (a trailing slash kept, `/` when empty) and query, as percent-encoded in the URL.
    static func requestTarget(of url: URL) -> String {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        var target = components?.percentEncodedPath ?? "/"
        if target.isEmpty { target = "/" }
        if let query = components?.percentEncodedQuery { target += "?" + query }
        return target
    }

    /// `host[:port]`: the port only when it is not the scheme's default, an IPv6 literal in brackets
    /// (or its colons would read as a port, RFC 9110 §7.2).
    static func hostHeader(_ url: URL, host: String) -> String {
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        let scheme = url.scheme?.lowercased()
        guard let port = url.port, port != (scheme == "https" ? 443 : 80) else { return bracketed }
        return "\(bracketed):\(port)"
    }
}
