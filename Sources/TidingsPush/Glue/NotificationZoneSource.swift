import Foundation

/// `NotificationZoneSource` is where ``MastodonNotificationRaiser`` reads the time zone that quiet hours and digest
/// times are read in. It is asked at each decision that reads the local time (never when the settings have no
/// quiet hours and no digest), so a change of the device's zone takes effect at the next decision without the app
/// reconfiguring anything.
public struct NotificationZoneSource: Sendable {
    private let read: @Sendable () -> NotificationTimeZone

    /// A source that asks `read` at each decision (an app's own view of the zone; a test's changing one).
    public init(_ read: @escaping @Sendable () -> NotificationTimeZone) { self.read = read }

    /// The device's zone as it is at each decision: ``NotificationTimeZone/current()``, which on Linux reads `TZ`
    /// or `/etc/localtime` as TZif without ICU (a memory-limited extension's decision stays under P2's limit).
    public static let device = NotificationZoneSource { NotificationTimeZone.current() }

    /// Always `zone`, whatever the device's is.
    public static func fixed(_ zone: NotificationTimeZone) -> NotificationZoneSource {
        NotificationZoneSource { zone }
    }

    /// The zone now.
    public func current() -> NotificationTimeZone { read() }
}
