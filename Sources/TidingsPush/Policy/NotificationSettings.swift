import Foundation

/// A daily window, in local wall-clock minutes, during which nothing is raised (seed 002 §5).
///
/// `start == end` is an empty window. A window whose end is before its start spans midnight (22:00–07:00).
/// Times are read in the time zone the policy is given, so the window follows the person when they travel,
/// and a DST change makes the night an hour shorter or longer rather than moving the window.
public struct QuietHours: Hashable, Codable, Sendable {
    /// The first minute of the day inside the window (0–1439).
    public var startMinute: Int
    /// The first minute of the day after the window (0–1439).
    public var endMinute: Int

    /// A window from `start` (hour, minute) to `end`; values are clamped to the day.
    public init(start: (hour: Int, minute: Int), end: (hour: Int, minute: Int)) {
        startMinute = Self.clamp(start.hour * 60 + start.minute)
        endMinute = Self.clamp(end.hour * 60 + end.minute)
    }

    private static func clamp(_ minute: Int) -> Int { min(max(minute, 0), 1439) }

    /// Whether `minuteOfDay` is inside the window.
    public func contains(minuteOfDay minute: Int) -> Bool {
        if startMinute == endMinute { return false }
        if startMinute < endMinute { return minute >= startMinute && minute < endMinute }
        return minute >= startMinute || minute < endMinute
    }
}

/// How an account's notifications are delivered.
public enum NotificationDelivery: Hashable, Codable, Sendable {
    /// Each one as it arrives.
    case immediately
    /// Held and raised as one summary per account at the given hours of the day (one to four, 0–23).
    /// `urgentMentionsAtOnce` lets private mentions and mentions from followed accounts through at once.
    case digest(hours: [Int], urgentMentionsAtOnce: Bool)

    /// The digest's hours, sorted, deduplicated and limited to four valid hours; empty when delivering at once.
    public var digestHours: [Int] {
        guard case .digest(let hours, _) = self else { return [] }
        return Array(Set(hours.filter { (0...23).contains($0) })).sorted().prefix(4).map { $0 }
    }
}

/// The platform the app displays on: it decides how many actions fit and whether a pushed payload must be shown.
public enum NotificationPlatform: String, Codable, Hashable, Sendable {
    /// iOS/macOS: a notification service extension must show something for every push.
    case apple
    /// Android: at most three actions; a push may show nothing.
    case android
}

/// The languages the engine words notifications in.
public enum NotificationLanguage: String, Codable, Hashable, Sendable, CaseIterable {
    /// English.
    case english = "en"
    /// German.
    case german = "de"
}

/// One account's notification settings: the category switches, quiet hours and delivery.
public struct NotificationSettings: Hashable, Codable, Sendable {
    /// The categories raised; every one by default.
    public var enabledCategories: Set<NotificationCategory>
    /// The quiet window; nil for none.
    public var quietHours: QuietHours?
    /// Immediately, or as a digest.
    public var delivery: NotificationDelivery

    /// Settings with every category on, no quiet hours, and immediate delivery unless said otherwise.
    public init(
        enabledCategories: Set<NotificationCategory> = Set(NotificationCategory.allCases),
        quietHours: QuietHours? = nil, delivery: NotificationDelivery = .immediately
    ) {
        self.enabledCategories = enabledCategories
        self.quietHours = quietHours
        self.delivery = delivery
    }

    /// Whether digest delivery is on (with at least one valid hour).
    public var isDigest: Bool { !delivery.digestHours.isEmpty }

    /// Whether a decision under these settings reads the local wall-clock time (quiet hours or a digest); when
    /// false, ``NotificationPolicy`` never consults the context's time zone, so a caller may skip looking it up.
    public var usesLocalTime: Bool { quietHours != nil || isDigest }
}
