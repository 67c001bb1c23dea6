/// The timelines Mastodon keeps read markers for.
public enum MastodonMarkerTimeline: String, Sendable, Hashable, CaseIterable {
    /// The home timeline: the last read status.
    case home
    /// Notifications: the last read notification.
    case notifications
}
