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
    static func floorDiv(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return (value % divisor != 0 && (value < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }

    /// The remainder that goes with ``floorDiv(_:_:)``: always in `0..<divisor` for a positive divisor.
    static func floorMod(_ value: Int64, _ divisor: Int64) -> Int64 {
        value - floorDiv(value, divisor) * divisor
    }

    /// Days from 1970-01-01 to `year`-`month`-`day` (Howard Hinnant's `days_from_civil`).
    static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = floorDiv(shiftedYear, 400)
        let yearOfEra = shiftedYear - era * 400
        let monthFromMarch = (month + 9) % 12
        let dayOfYear = (153 * monthFromMarch + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of day `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`).
    static func date(days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = floorDiv(shifted, 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

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
