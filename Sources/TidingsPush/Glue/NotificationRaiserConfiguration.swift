import Foundation
import TidingsCore

/// One account's notification configuration as ``MastodonNotificationRaiser`` uses it; every field can change
/// while the app runs (``MastodonNotificationRaiser/configure(_:)``) and takes effect at the next decision.
public struct NotificationRaiserConfiguration: Sendable {
    /// Category switches, quiet hours, digest.
    public var settings: NotificationSettings
    /// Wake or content mode for this account's pushes.
    public var mode: PushDeliveryMode
    /// Language, platform, handle, lock, image cache.
    public var content: NotificationContentContext
    /// The time zone quiet hours and digest times are read in (the device's current one).
    public var timeZone: TimeZone
    /// The signed-in account's own ID, which tells a reply from a mention; nil when unknown.
    public var readerID: ServerID?

    /// A configuration; every category on, delivered at once, wake mode, English on Apple, UTC unless said.
    public init(
        settings: NotificationSettings = NotificationSettings(), mode: PushDeliveryMode = .wake,
        content: NotificationContentContext = NotificationContentContext(),
        timeZone: TimeZone = TimeZone(identifier: "UTC") ?? .current, readerID: ServerID? = nil
    ) {
        self.settings = settings
        self.mode = mode
        self.content = content
        self.timeZone = timeZone
        self.readerID = readerID
    }
}
