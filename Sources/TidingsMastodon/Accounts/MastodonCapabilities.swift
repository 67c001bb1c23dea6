import Foundation
import TidingsCore

/// What one account's server offers, read from `GET /api/v2/instance` or, where that is missing,
/// `GET /api/v1/instance`.
public struct MastodonCapabilities: Sendable, Hashable {
    /// Which instance endpoint the capabilities came from.
    public enum Source: Sendable, Hashable {
        /// `/api/v2/instance`.
        case version2
        /// `/api/v1/instance` (v2 was missing or unreadable).
        case version1
    }

    /// The streaming API's base URL; nil when the server advertises none (Nextcloud Social's `urls: {}`).
    public var streamingURL: URL?
    /// The server's Web Push (VAPID) public key; nil when absent or empty (Nextcloud Social's `""`).
    public var vapidKey: String?
    /// The version string as sent.
    public var versionString: String
    /// The parsed Mastodon API version; nil when unreadable.
    public var version: MastodonVersion?
    /// Whether the server looks like Nextcloud Social: `urls` present but empty and `vapid_key == ""`.
    public var isNextcloudSocial: Bool
    /// Where these came from.
    public var source: Source
    /// Posting limits from `configuration`.
    public var limits: MastodonInstanceLimits

    /// Whether the server streams: a streaming URL is advertised.
    public var offersStreaming: Bool { streamingURL != nil }
    /// Whether Mastodon Web Push is possible: a non-empty VAPID key. (A Nextcloud Social account may
    /// still get push through its Nextcloud's notifications app: that is decided elsewhere.)
    public var offersWebPush: Bool { vapidKey != nil }
    /// Whether `GET /api/v1/statuses?id[]=` exists (Mastodon 4.3+); otherwise re-check one status at a time.
    public var supportsStatusesByID: Bool {
        guard !isNextcloudSocial, let version else { return false }
        return version >= MastodonVersion(4, 3)
    }
    /// Whether grouped notifications and the v2 unread count exist (Mastodon 4.3+).
    public var supportsGroupedNotifications: Bool { supportsStatusesByID }
    /// The most items a timeline page returns: Nextcloud Social caps at 50, Mastodon at 40.
    public var maximumPageLimit: Int { isNextcloudSocial ? 50 : 40 }

    /// Capabilities from a v2 instance.
    public init(_ instance: MastodonInstanceV2) {
        self.init(
            streamingURL: instance.streamingURL, vapidKey: instance.vapidPublicKey, version: instance.version,
            urlsEmpty: instance.urlsEmpty, source: .version2, limits: instance.limits)
    }

    /// Capabilities from a v1 instance.
    public init(_ instance: MastodonInstanceV1) {
        self.init(
            streamingURL: instance.streamingAPI, vapidKey: instance.vapidKey, version: instance.version,
            urlsEmpty: instance.urlsEmpty, source: .version1, limits: instance.limits)
    }

    private init(
        streamingURL: URL?, vapidKey: String?, version: String, urlsEmpty: Bool, source: Source,
        limits: MastodonInstanceLimits
    ) {
        self.streamingURL = streamingURL
        self.vapidKey = vapidKey?.isEmpty == false ? vapidKey : nil
        self.versionString = version
        self.version = MastodonVersion(parsing: version)
        self.isNextcloudSocial = urlsEmpty && vapidKey == ""
        self.source = source
        self.limits = limits
    }

    /// Fetches the capabilities: v2 first; on 404/410 or an unreadable v2 body, v1.
    ///
    /// - Throws: ``MastodonError`` from v1 (or from v2 for anything but a missing or unreadable
    ///   endpoint, e.g. 401 or 429), or `CancellationError`.
    public static func fetch(with client: MastodonAPIClient) async throws -> MastodonCapabilities {
        do {
            return MastodonCapabilities(try await client.instanceV2())
        } catch MastodonError.notFound {
        } catch MastodonError.decoding {
        }
        return MastodonCapabilities(try await client.instanceV1())
    }
}
