import Foundation

/// `NotificationCalendar` is the wall-clock arithmetic of quiet hours and digests in one time zone: pure
/// functions of a `Date`, so the same instant always gives the same answer, across midnight and DST changes.
///
/// A local time that does not exist (skipped by a DST change) is taken as the next time that does; one that
/// exists twice is taken at its first occurrence.
public struct NotificationCalendar: Sendable {
    /// The time zone the person is in now.
    public let timeZone: TimeZone
    private let calendar: Calendar

    /// A calendar in `timeZone`.
    public init(timeZone: TimeZone) {
        self.timeZone = timeZone
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.calendar = calendar
    }

    /// The local minute of the day (0–1439) at `date`.
    public func minuteOfDay(_ date: Date) -> Int {
        let parts = calendar.dateComponents([.hour, .minute], from: date)
        return (parts.hour ?? 0) * 60 + (parts.minute ?? 0)
    }

    /// The first instant after `date` whose local time is `minuteOfDay`.
    public func next(minuteOfDay minute: Int, after date: Date) -> Date {
        let components = DateComponents(hour: minute / 60, minute: minute % 60, second: 0)
        return calendar.nextDate(
            after: date, matching: components, matchingPolicy: .nextTime, repeatedTimePolicy: .first,
            direction: .forward) ?? date.addingTimeInterval(86_400)
    }

    /// Whether `date` is inside `quietHours`.
    public func isQuiet(_ date: Date, _ quietHours: QuietHours?) -> Bool {
        guard let quietHours else { return false }
        return quietHours.contains(minuteOfDay: minuteOfDay(date))
    }

    /// The end of the quiet window `date` is in; `date` itself when it is not in one.
    public func quietEnd(at date: Date, _ quietHours: QuietHours?) -> Date {
        guard let quietHours, quietHours.contains(minuteOfDay: minuteOfDay(date)) else { return date }
        return next(minuteOfDay: quietHours.endMinute, after: date)
    }

    /// The digest deliveries after `date`, earliest first: each digest hour's next occurrence, moved to the end
    /// of quiet hours when it falls inside them (two moved to one end count once). At most `count` times.
    public func digestTimes(after date: Date, settings: NotificationSettings, count: Int = 4) -> [Date] {
        let hours = settings.delivery.digestHours
        guard !hours.isEmpty, count > 0 else { return [] }
        var times: [Date] = []
        var cursor = date
        // Two days of slots always hold `count` ≤ 8 distinct deliveries; the loop is bounded either way.
        for _ in 0..<(count * 2 + 8) where times.count < count {
            let slot = hours.map { next(minuteOfDay: $0 * 60, after: cursor) }.min() ?? cursor
            let delivery = quietEnd(at: slot, settings.quietHours)
            if !times.contains(delivery), delivery > date { times.append(delivery) }
            cursor = slot
        }
        return times.sorted()
    }

    /// Whether a digest delivery fell due after `lastDelivered` and at or before `now`: a job that runs late
    /// still delivers.
    public func isDigestDue(now: Date, lastDelivered: Date, settings: NotificationSettings) -> Bool {
        guard let next = digestTimes(after: lastDelivered, settings: settings, count: 1).first else { return false }
        return next <= now
    }
}
