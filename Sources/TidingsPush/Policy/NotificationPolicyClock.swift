import Foundation
import TidingsCore

/// `NotificationPolicyClock` reads wall-clock time from an injected `Clock`: `origin` plus the time elapsed on
/// the clock since it was made. With a `TestClock` a test moves "now" across midnights and DST changes by
/// advancing the clock; an app passes `ContinuousClock()` and `Date()`.
public struct NotificationPolicyClock: Sendable {
    private let timeline: Timeline
    private let origin: Date

    /// A clock that reads `origin` now and moves with `clock`.
    public init<C: Clock>(_ clock: C, origin: Date) where C.Duration == Duration {
        timeline = Timeline(clock)
        self.origin = origin
    }

    /// The current wall-clock time.
    public var now: Date { origin.addingTimeInterval(timeline.elapsed.inSeconds) }

    /// Suspends on the underlying clock until `date` (at once when it has passed).
    ///
    /// - Throws: `CancellationError` when the task is cancelled meanwhile.
    public func sleep(until date: Date) async throws {
        let seconds = date.timeIntervalSince(origin)
        try await timeline.sleep(until: seconds <= 0 ? .zero : .clampedSeconds(seconds))
    }
}

extension NotificationCalendar {
    /// The one-shot jobs the app schedules for an account after `date`, earliest first: each coming digest
    /// delivery and the next end of quiet hours (when what was held is raised). Empty with neither.
    public func jobTimes(after date: Date, settings: NotificationSettings) -> [Date] {
        var times = digestTimes(after: date, settings: settings)
        if let quiet = settings.quietHours, quiet.startMinute != quiet.endMinute {
            let end = next(minuteOfDay: quiet.endMinute, after: date)
            if !times.contains(end) { times.append(end) }
        }
        return times.sorted()
    }
}
