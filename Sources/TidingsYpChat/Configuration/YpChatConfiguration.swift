import Foundation

/// Where a YpChat client talks to: the base URL of REST and of the Socket.IO endpoint.
///
/// Guarantees: ``baseURL`` is absolute, has no query or fragment, and no trailing slash (as the
/// Android app's `AppConfig` trims it), so `baseURL + "/api/session"` is always well-formed; it is
/// `https` unless ``allowsInsecureHTTP`` was asked for (loopback sandboxes, debug builds).
public struct YpChatConfiguration: Sendable, Equatable {
    /// The production server, the Android app's `defaultBaseUrl`.
    public static let defaultBaseURLString = "https://www.ypchat.net"
    /// The Info.plist key a build sets to override the base URL (per build configuration).
    public static let infoKey = "BASE_URL"
    /// The environment variable that overrides the base URL at run time.
    public static let environmentVariable = "YPCHAT_BASE_URL"

    /// The base URL without a trailing slash.
    public let baseURL: URL
    /// Whether a plain `http` base URL is accepted.
    public let allowsInsecureHTTP: Bool
    /// The Socket.IO path on the base URL's host (the server's root `/socket.io/`, as on Android).
    public var socketPath: String

    /// A configuration for `baseURL` (trailing slashes removed).
    ///
    /// - Throws: ``YpChatError/invalidConfiguration`` for a URL that is not absolute http(s), carries
    ///   a query, fragment or credentials, or is `http` without `allowsInsecureHTTP`.
    public init(
        baseURL: String = YpChatConfiguration.defaultBaseURLString, allowsInsecureHTTP: Bool = false,
        socketPath: String = "/socket.io/"
    ) throws(YpChatError) {
        var text = baseURL.trimmingCharacters(in: .whitespacesAndNewlines)
        while text.hasSuffix("/") { text.removeLast() }
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty, let url = components.url
        else {
            throw YpChatError(.invalidConfiguration, operation: "baseURL", message: "not an absolute URL")
        }
        guard scheme == "https" || scheme == "http" else {
            throw YpChatError(.invalidConfiguration, operation: "baseURL", message: "scheme must be https")
        }
        guard components.query == nil, components.fragment == nil, components.user == nil,
            components.password == nil
        else {
            throw YpChatError(
                .invalidConfiguration, operation: "baseURL", message: "no query, fragment or credentials allowed")
        }
        guard scheme == "https" || allowsInsecureHTTP else {
            throw YpChatError(
                .invalidConfiguration, operation: "baseURL", message: "plain http needs allowsInsecureHTTP")
        }
        self.baseURL = url
        self.allowsInsecureHTTP = allowsInsecureHTTP
        self.socketPath = socketPath
    }

    /// The configuration an app gets without code: the run-time override (`environment`'s
    /// ``environmentVariable``) wins over the build's (`infoDictionary`'s ``infoKey``), which wins
    /// over ``defaultBaseURLString``. Empty values count as unset.
    ///
    /// - Throws: ``YpChatError/invalidConfiguration`` when the chosen value is unusable (never falls
    ///   back silently to another server).
    public static func resolved(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        infoDictionary: [String: Any]? = Bundle.main.infoDictionary, allowsInsecureHTTP: Bool = false
    ) throws(YpChatError) -> YpChatConfiguration {
        let fromEnvironment = environment[environmentVariable].flatMap { $0.isEmpty ? nil : $0 }
        let fromBuild = (infoDictionary?[infoKey] as? String).flatMap { $0.isEmpty ? nil : $0 }
        return try YpChatConfiguration(
            baseURL: fromEnvironment ?? fromBuild ?? defaultBaseURLString, allowsInsecureHTTP: allowsInsecureHTTP)
    }

    /// `path` (relative, e.g. `api/session`) on the base URL.
    public func url(_ path: String) -> URL {
        URL(string: baseURL.absoluteString + "/" + path.drop { $0 == "/" }) ?? baseURL
    }

    /// `reference` made absolute: a URL with a scheme as it is, anything else on the base URL
    /// (the plan: an uploaded image's relative URL gets the base URL in front).
    public func absoluteURL(_ reference: String) -> URL? {
        if let url = URL(string: reference), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https"
        {
            return url
        }
        guard !reference.isEmpty else { return nil }
        return URL(string: baseURL.absoluteString + "/" + reference.drop { $0 == "/" })
    }
}
