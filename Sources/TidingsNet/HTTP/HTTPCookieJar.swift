import Foundation
import TidingsCore

/// One cookie as a server set it (RFC 6265 §5.3).
public struct HTTPCookieValue: Sendable, Equatable {
    /// The cookie name.
    public var name: String
    /// The cookie value (a secret as far as logs are concerned).
    public var value: String
    /// The domain it is sent to, lower-cased, without a leading dot.
    public var domain: String
    /// Whether it goes to exactly ``domain`` only (no `Domain` attribute was given).
    public var hostOnly: Bool
    /// The path prefix it is sent for.
    public var path: String
    /// When it stops being sent; `nil` for a session cookie.
    public var expires: Date?
    /// Whether it is sent over HTTPS only.
    public var secure: Bool
}

/// An `HTTPCookieJar` keeps the cookies of one ``HTTPClient`` (never a process-wide store), so two
/// clients — two accounts — never see each other's session.
///
/// It parses `Set-Cookie` itself, because FoundationNetworking on Linux ignores `Max-Age`:
/// `Max-Age` wins over `Expires`, a zero or negative one deletes the cookie, and expiry is judged
/// by the injected `now`, not the system time. Matching follows RFC 6265: host-only or domain
/// cookies, path prefixes, `Secure` only over HTTPS. Cookies live in memory only.
public final class HTTPCookieJar: Sendable {
    private let now: @Sendable () -> Date
    private let cookies = Locked<[HTTPCookieValue]>([])

    /// Creates an empty jar that judges expiry with `now`.
    public init(now: @escaping @Sendable () -> Date = { Date() }) {
        self.now = now
    }

    /// Every unexpired cookie, for inspection.
    public var all: [HTTPCookieValue] {
        let date = now()
        return cookies.withLock { stored in
            stored.removeAll { $0.expires.map { $0 <= date } ?? false }
            return stored
        }
    }

    /// Forgets every cookie (sign-out).
    public func removeAll() { cookies.withLock { $0.removeAll() } }

    /// Stores the cookies of `Set-Cookie` header values received from `url`; invalid ones are ignored.
    public func store(setCookieHeaders: [String], from url: URL) {
        guard let host = url.host?.lowercased() else { return }
        let date = now()
        for header in setCookieHeaders {
            guard let cookie = Self.parse(header, host: host, requestPath: url.path, now: date) else { continue }
            cookies.withLock { stored in
                stored.removeAll { $0.name == cookie.name && $0.domain == cookie.domain && $0.path == cookie.path }
                if cookie.expires.map({ $0 > date }) ?? true { stored.append(cookie) }
            }
        }
    }

    /// The `Cookie` header value for a request to `url`, or `nil` when no cookie applies.
    public func cookieHeader(for url: URL) -> String? {
        guard let host = url.host?.lowercased() else { return nil }
        let secure = url.scheme?.lowercased() == "https" || url.scheme?.lowercased() == "wss"
        let path = url.path.isEmpty ? "/" : url.path
        let date = now()
        let matching = cookies.withLock { stored -> [HTTPCookieValue] in
            stored.removeAll { $0.expires.map { $0 <= date } ?? false }
            return stored.filter { cookie in
                (cookie.hostOnly ? host == cookie.domain : Self.domainMatches(host, cookie.domain))
                    && Self.pathMatches(path, cookie.path) && (!cookie.secure || secure)
            }
        }
        guard !matching.isEmpty else { return nil }
        // Longer paths first (RFC 6265 §5.4), so the most specific cookie wins on the server.
        return matching.sorted { $0.path.count > $1.path.count }.map { "\($0.name)=\($0.value)" }
            .joined(separator: "; ")
    }

    static func parse(_ header: String, host: String, requestPath: String, now: Date) -> HTTPCookieValue? {
        let pieces = header.split(separator: ";", omittingEmptySubsequences: false)
        guard let first = pieces.first, let equals = first.firstIndex(of: "=") else { return nil }
        let name = first[..<equals].trimmingCharacters(in: .whitespaces)
        let value = first[first.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { return nil }
        var cookie = HTTPCookieValue(
            name: name, value: value, domain: host, hostOnly: true, path: defaultPath(requestPath), expires: nil,
            secure: false)
        var maxAge: Int?
        for attribute in pieces.dropFirst() {
            let pair = attribute.split(separator: "=", maxSplits: 1)
            let key = pair.first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
            let argument = pair.count > 1 ? pair[1].trimmingCharacters(in: .whitespaces) : ""
            switch key {
            case "max-age":
                if let seconds = Int(argument) { maxAge = seconds }
            case "expires":
                if let date = HTTPDate.parse(argument) { cookie.expires = date }
            case "domain":
                var domain = argument.lowercased()
                if domain.hasPrefix(".") { domain.removeFirst() }
                guard !domain.isEmpty else { continue }
                // A server may only widen a cookie to a domain it belongs to.
                guard domainMatches(host, domain) else { return nil }
                cookie.domain = domain
                cookie.hostOnly = false
            case "path":
                if argument.hasPrefix("/") { cookie.path = argument }
            case "secure":
                cookie.secure = true
            default:
                continue
            }
        }
        if let maxAge {
            // Max-Age wins over Expires; zero or less means "delete now".
            cookie.expires = maxAge <= 0 ? .distantPast : now.addingTimeInterval(TimeInterval(maxAge))
        }
        return cookie
    }

    static func domainMatches(_ host: String, _ domain: String) -> Bool {
        host == domain || (host.hasSuffix("." + domain) && !isIPAddress(host))
    }

    static func pathMatches(_ requestPath: String, _ cookiePath: String) -> Bool {
        if requestPath == cookiePath { return true }
        guard requestPath.hasPrefix(cookiePath) else { return false }
        return cookiePath.hasSuffix("/") || requestPath.dropFirst(cookiePath.count).hasPrefix("/")
    }

    static func defaultPath(_ path: String) -> String {
        guard path.hasPrefix("/"), let lastSlash = path.lastIndex(of: "/"), lastSlash != path.startIndex else {
            return "/"
        }
        return String(path[..<lastSlash])
    }
}
