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
    /// Where the time zone quiet hours and digest times are read in comes from, asked at each decision (the
    /// device's by default, so a change of zone is followed).
    public var zone: NotificationZoneSource
    /// The signed-in account's own ID, which tells a reply from a mention; nil to use the one the engine learned
    /// at sign-in (`MastodonAccountEngine.readerID`, kept with the account by `MastodonSync`).
    public var readerID: ServerID?

    /// A configuration; every category on, delivered at once, wake mode, English on Apple, in the device's zone
    /// unless said.
    public init(
        settings: NotificationSettings = NotificationSettings(), mode: PushDeliveryMode = .wake,
        content: NotificationContentContext = NotificationContentContext(), zone: NotificationZoneSource = .device,
        readerID: ServerID? = nil
    ) {
        self.settings = settings
        self.mode = mode
        self.content = content
        self.zone = zone
        self.readerID = readerID
    }

    /// A configuration always in Foundation's `timeZone` (on Linux, reading local time in it loads ICU's zone
    /// data; ``NotificationZoneSource/device`` does not).
    public init(
        settings: NotificationSettings = NotificationSettings(), mode: PushDeliveryMode = .wake,
        content: NotificationContentContext = NotificationContentContext(), timeZone: TimeZone,
        readerID: ServerID? = nil
    ) {
        self.init(
            settings: settings, mode: mode, content: content, zone: .fixed(.foundation(timeZone)), readerID: readerID)
    }
}
