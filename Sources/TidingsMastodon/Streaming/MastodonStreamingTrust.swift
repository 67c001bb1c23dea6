import Foundation

/// Where the user stream may send the account's bearer token: the streaming URL comes from the server's instance
/// answer (`urls.streaming`, `configuration.urls.streaming`), so a compromised or misconfigured server could
/// name any host.
///
/// The rule, applied before every connection:
/// - The scheme is `wss` (or `https`, turned into `wss`). `ws` (or `http`) only when the API itself is plain
///   `http` on a loopback host (`localhost`, `127.0.0.0/8`, `::1`): a development server.
/// - The host is the API's host; or, when the API's host is a name, its registrable domain or a host under it.
///   Without a public-suffix list the registrable domain is taken as the API host's last two labels
///   (`social.example.com` → `example.com`, so `streaming.example.com` is accepted). When the API's host is an
///   IP literal only that same address is accepted.
///
/// Anything else is refused with a reason that names the hosts and schemes, never the token: the stream gives
/// up (``MastodonStreamGiveUpReason/untrustedStreamingURL(_:)``) and polling stays.
public enum MastodonStreamingTrust {
    /// Why the token must not go to `streaming` for an account whose API is at `api`; nil when it may.
    ///
    /// For example:
    ///
    /// ```swift
    /// let api = URL(string: "https://social.example.com")!
    /// MastodonStreamingTrust.refusal(streaming: URL(string: "wss://streaming.example.com")!, api: api)  // nil
    /// MastodonStreamingTrust.refusal(streaming: URL(string: "wss://evil.example")!, api: api)  // a reason
    /// ```
    public static func refusal(streaming: URL, api: URL) -> String? {
        let scheme = streaming.scheme?.lowercased() ?? ""
        let apiScheme = api.scheme?.lowercased() ?? ""
        guard let host = normalized(streaming.host), !host.isEmpty else {
            return "the streaming URL names no host"
        }
        guard let apiHost = normalized(api.host), !apiHost.isEmpty else { return "the API URL names no host" }
        switch scheme {
        case "wss", "https":
            break
        case "ws", "http":
            guard apiScheme == "http", isLoopback(apiHost) else {
                return "the streaming URL \(scheme)://\(host) is not encrypted (wss)"
            }
        default:
            return "the streaming URL's scheme \(scheme.isEmpty ? "(none)" : scheme) is not wss"
        }
        if host == apiHost { return nil }
        if isIPLiteral(apiHost) {
            return "the streaming host \(host) is not the API's address \(apiHost)"
        }
        let domain = registrableDomain(apiHost)
        if host == domain || host.hasSuffix("." + domain) { return nil }
        return "the streaming host \(host) is outside the API's domain \(domain)"
    }

    /// The host in lower case, without brackets or a trailing dot.
    static func normalized(_ host: String?) -> String? {
        guard var host = host?.lowercased() else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        while host.hasSuffix(".") { host.removeLast() }
        return host
    }

    /// The last two labels of a host name (the whole name when it has fewer).
    static func registrableDomain(_ host: String) -> String {
        host.split(separator: ".", omittingEmptySubsequences: false).suffix(2).joined(separator: ".")
    }

    static func isIPLiteral(_ host: String) -> Bool {
        if host.contains(":") { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in !part.isEmpty && part.allSatisfy(\.isNumber) }
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host.hasSuffix(".localhost") || host == "::1"
            || (isIPLiteral(host) && host.hasPrefix("127."))
    }
}
