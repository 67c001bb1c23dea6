import TidingsCore

/// Proleptic Gregorian date arithmetic on seconds since 1970-01-01T00:00:00 (UTC or local), with no calendar
/// object: the local-time rules need only days, months and weekdays, and building a Foundation `Calendar` on
/// Linux pulls ICU into a memory-limited notification extension (issue 12's P2).
///
/// Every input is an instant already clamped to ``instantRange``, so no product or sum here can overflow.
enum CivilTime {
    /// Instants (seconds) the local-time code accepts; anything outside is clamped first. About ±142 million
    /// years: far beyond any zone rule, small enough that day and year arithmetic stays far from `Int64`'s
    /// limits even after adding a week of rule time and a day of offset.
    static let instantRange: ClosedRange<Int64> = -(1 << 52)...(1 << 52)

    static let secondsPerDay: Int64 = 86_400

    /// `instant` moved into ``instantRange``.
    static func clamp(_ instant: Int64) -> Int64 {
        min(max(instant, instantRange.lowerBound), instantRange.upperBound)
    }

    /// The whole seconds of `interval` (seconds since 1970), rounded down and clamped; NaN reads as 0.
    static func seconds(_ interval: Double) -> Int64 {
        guard !interval.isNaN else { return 0 }
        let floored = interval.rounded(.down)
        if floored <= Double(instantRange.lowerBound) { return instantRange.lowerBound }
        if floored >= Double(instantRange.upperBound) { return instantRange.upperBound }
        return Int64(floored)
    }

    /// Division rounding towards negative infinity (instants before 1970 belong to the day that holds them).
    static func floorDiv(_ value: Int64, _ divisor: Int64) -> Int64 { GregorianDays.floorDiv(value, divisor) }

    /// The remainder that goes with ``floorDiv(_:_:)``: always in `0..<divisor` for a positive divisor.
    static func floorMod(_ value: Int64, _ divisor: Int64) -> Int64 { GregorianDays.floorMod(value, divisor) }

    /// Days from 1970-01-01 to `year`-`month`-`day`.
    static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        GregorianDays.days(year: year, month: month, day: day)
    }

    /// The date of day `days` after 1970-01-01.
    static func date(days: Int64) -> (year: Int64, month: Int64, day: Int64) { GregorianDays.date(days: days) }

    static func isLeapYear(_ year: Int64) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    static func monthLength(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// 0 for Sunday through 6 for Saturday (1970-01-01 was a Thursday).
    static func weekday(days: Int64) -> Int64 { floorMod(days + 4, 7) }
}
