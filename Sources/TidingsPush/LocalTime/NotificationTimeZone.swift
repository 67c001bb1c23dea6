import Foundation

/// `NotificationTimeZone` is the zone quiet hours and digest times are read in: Foundation's `TimeZone` (what an
/// app on Apple platforms passes, and what existing callers pass) or a ``ZoneInfo`` read from the TZif data
/// without ICU (what a memory-limited Linux process uses; issue 12's P2). Both give the same local times for the
/// zone's rules; the tests hold one against the other.
public enum NotificationTimeZone: Hashable, Sendable {
    /// Foundation's zone; local time goes through a Gregorian `Calendar`.
    case foundation(TimeZone)
    /// A zone's TZif rules; local time is computed from its offsets, no `Calendar` or ICU involved.
    case zoneInfo(ZoneInfo)

    /// The device's zone: on Linux read from `TZ` or `/etc/localtime` without ICU (``ZoneInfo/current(tz:localtime:directory:)``),
    /// falling back to `TimeZone.current` when that cannot be read; on other platforms `TimeZone.current`.
    public static func current() -> NotificationTimeZone {
        #if os(Linux)
            if let zone = try? ZoneInfo.current() { return .zoneInfo(zone) }
        #endif
        return .foundation(.current)
    }

    /// The zone's identifier (`Europe/Berlin`).
    public var identifier: String {
        switch self {
        case .foundation(let zone): zone.identifier
        case .zoneInfo(let zone): zone.identifier
        }
    }

    /// The zone as Foundation's `TimeZone`; for ``zoneInfo(_:)`` looked up by identifier (which loads ICU's zone
    /// data on Linux), falling back to a fixed zone at the current offset when Foundation does not know it.
    public var foundationTimeZone: TimeZone {
        switch self {
        case .foundation(let zone): return zone
        case .zoneInfo(let zone):
            if let named = TimeZone(identifier: zone.identifier) { return named }
            return TimeZone(secondsFromGMT: zone.utcOffset(at: Date())) ?? .gmt
        }
    }
}
