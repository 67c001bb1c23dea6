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
///
/// Guards: a `Domain` that is a public suffix (``PublicSuffixList``) is refused, unless it is the
/// host itself, which then gets a host-only cookie (RFC 6265 §5.3 step 5); a `Secure` cookie is
/// only accepted over https, and a cookie from plain http never replaces or shadows a `Secure`
/// one (RFC 6265bis "leave secure cookies alone"); a cookie over 4096 bytes is ignored; and the
/// jar holds at most ``maximumCookies`` cookies, ``maximumCookiesPerDomain`` per domain, dropping
/// the oldest first.
public final class HTTPCookieJar: Sendable {
    /// The most cookies the jar keeps.
    public let maximumCookies: Int
    /// The most cookies the jar keeps for one registrable domain.
    public let maximumCookiesPerDomain: Int
    /// The largest cookie accepted, name and value together, in bytes (RFC 6265 §6.1's minimum).
    public static let maximumCookieSize = 4096
    private let now: @Sendable () -> Date
    private let publicSuffixes: PublicSuffixList
    // Oldest first, so eviction drops from the front.
    private let cookies = LockedState<[HTTPCookieValue]>([])

    /// Creates an empty jar that judges expiry with `now`.
    ///
    /// - Parameters:
    ///   - now: the current date, injected so tests control expiry.
    ///   - publicSuffixes: the suffixes no cookie may be set for.
    ///   - maximumCookies: the most cookies kept in all.
    ///   - maximumCookiesPerDomain: the most kept for one registrable domain.
    public init(
        now: @escaping @Sendable () -> Date = { Date() }, publicSuffixes: PublicSuffixList = .bundled,
        maximumCookies: Int = 1000, maximumCookiesPerDomain: Int = 50
    ) {
        self.now = now
        self.publicSuffixes = publicSuffixes
        self.maximumCookies = max(1, maximumCookies)
        self.maximumCookiesPerDomain = max(1, maximumCookiesPerDomain)
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
        let secureScheme = url.scheme?.lowercased() == "https" || url.scheme?.lowercased() == "wss"
        let date = now()
        for header in setCookieHeaders {
            guard
                let cookie = Self.parse(
                    header, host: host, requestPath: url.path, now: date, publicSuffixes: publicSuffixes),
                secureScheme || !cookie.secure
            else { continue }
            cookies.withLock { stored in
                // Plain http must not replace, delete or shadow a Secure cookie (RFC 6265bis §5.7).
                if !secureScheme,
                    stored.contains(where: { old in
                        old.secure && old.name == cookie.name
                            && (Self.domainMatches(old.domain, cookie.domain)
                                || Self.domainMatches(cookie.domain, old.domain))
                            && Self.pathMatches(cookie.path, old.path)
                    })
                {
                    return
                }
                stored.removeAll { $0.name == cookie.name && $0.domain == cookie.domain && $0.path == cookie.path }
                guard cookie.expires.map({ $0 > date }) ?? true else { return }
                stored.append(cookie)
                enforceLimits(&stored, newest: cookie, now: date)
            }
        }
    }

    /// Drops expired cookies, then the oldest of the new cookie's domain, then the oldest overall.
    private func enforceLimits(_ stored: inout [HTTPCookieValue], newest: HTTPCookieValue, now date: Date) {
        let site = publicSuffixes.registrableDomain(of: newest.domain) ?? newest.domain
        func sameSite(_ cookie: HTTPCookieValue) -> Bool {
            (publicSuffixes.registrableDomain(of: cookie.domain) ?? cookie.domain) == site
        }
        var siteCount = stored.count(where: sameSite)
        if stored.count > maximumCookies || siteCount > maximumCookiesPerDomain {
            stored.removeAll { $0.expires.map { $0 <= date } ?? false }
            siteCount = stored.count(where: sameSite)
        }
        while siteCount > maximumCookiesPerDomain, let index = stored.firstIndex(where: sameSite) {
            stored.remove(at: index)
            siteCount -= 1
        }
        if stored.count > maximumCookies { stored.removeFirst(stored.count - maximumCookies) }
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

    static func parse(
        _ header: String, host: String, requestPath: String, now: Date,
        publicSuffixes: PublicSuffixList = .bundled
    ) -> HTTPCookieValue? {
        let pieces = header.split(separator: ";", omittingEmptySubsequences: false)
        guard let first = pieces.first, let equals = first.firstIndex(of: "=") else { return nil }
        let name = first[..<equals].trimmingCharacters(in: .whitespaces)
        let value = first[first.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        // The pair goes back out in a Cookie header: it must not be able to break that line.
        guard !name.isEmpty, name.utf8.count + value.utf8.count <= maximumCookieSize,
            HTTPFieldSyntax.isValidName(name), HTTPFieldSyntax.isValidValue(value)
        else { return nil }
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
                // Never to a public suffix: `Domain=co.uk` would reach every site below it. The host
                // itself may be one (a site on github.io); it then gets a host-only cookie.
                if publicSuffixes.isPublicSuffix(domain) {
                    guard domain == host else { return nil }
                    cookie.domain = host
                    cookie.hostOnly = true
                    continue
                }
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
