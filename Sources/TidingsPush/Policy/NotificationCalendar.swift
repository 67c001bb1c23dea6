import Foundation

/// `NotificationCalendar` is the wall-clock arithmetic of quiet hours and digests in one time zone: pure
/// functions of a `Date`, so the same instant always gives the same answer, across midnight and DST changes.
///
/// A local time that does not exist (skipped by a DST change) is taken as the next time that does; one that
/// exists twice is taken at its first occurrence still after the given date. With a ``NotificationTimeZone/zoneInfo(_:)`` zone the answers
/// come from the zone's offsets alone (no `Calendar`, no ICU: what a memory-limited extension needs); with a
/// Foundation `TimeZone` from a Gregorian `Calendar`. Both give the same answers (`ZoneInfoCalendarTests`).
public struct NotificationCalendar: Sendable {
    /// The zone the person is in now.
    public let zone: NotificationTimeZone
    private let calendar: Calendar?

    /// A calendar in Foundation's `timeZone`.
    public init(timeZone: TimeZone) {
        self.init(zone: .foundation(timeZone))
    }

    /// A calendar in `zone`; a ``NotificationTimeZone/zoneInfo(_:)`` zone builds no Foundation calendar.
    public init(zone: NotificationTimeZone) {
        self.zone = zone
        switch zone {
        case .foundation(let timeZone):
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = timeZone
            self.calendar = calendar
        case .zoneInfo:
            calendar = nil
        }
    }

    /// The time zone as Foundation's (see ``NotificationTimeZone/foundationTimeZone``).
    public var timeZone: TimeZone { zone.foundationTimeZone }

    /// The local minute of the day (0–1439) at `date`.
    public func minuteOfDay(_ date: Date) -> Int {
        guard case .zoneInfo(let info) = zone else {
            let parts = calendar?.dateComponents([.hour, .minute], from: date)
            return (parts?.hour ?? 0) * 60 + (parts?.minute ?? 0)
        }
        let instant = CivilTime.seconds(date.timeIntervalSince1970)
        let local = instant + Int64(info.utcOffset(atUnixTime: instant))
        return Int(CivilTime.floorMod(local, CivilTime.secondsPerDay) / 60)
    }

    /// The first instant after `date` whose local time is `minuteOfDay`.
    public func next(minuteOfDay minute: Int, after date: Date) -> Date {
        guard case .zoneInfo(let info) = zone else {
            let components = DateComponents(hour: minute / 60, minute: minute % 60, second: 0)
            return calendar?.nextDate(
                after: date, matching: components, matchingPolicy: .nextTime, repeatedTimePolicy: .first,
                direction: .forward) ?? date.addingTimeInterval(86_400)
        }
        let minute = Int64(min(max(minute, 0), 1439))
        let instant = CivilTime.seconds(date.timeIntervalSince1970)
        let today = CivilTime.floorDiv(instant + Int64(info.utcOffset(atUnixTime: instant)), CivilTime.secondsPerDay)
        // The wanted reading happens on the local day of `date` or the next; the day before and two after cover a
        // change of offset around midnight (Apia skipped a whole day). A repeated reading counts at each occurrence
        // still ahead, as Foundation's `nextDate` has it; a skipped one at the end of the gap.
        let after = date.timeIntervalSince1970
        let candidates = ((today - 1)...(today + 3)).flatMap {
            info.instants(atLocalUnixTime: $0 * CivilTime.secondsPerDay + minute * 60)
        }
        guard let first = candidates.filter({ Double($0) > after }).min() else {
            return date.addingTimeInterval(86_400)
        }
        return Date(timeIntervalSince1970: Double(first))
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
