/// Day arithmetic of the proleptic Gregorian calendar on days since 1970-01-01, with no calendar object.
///
/// Wire timestamps (Kecalek) and the notification policy's local time (TidingsPush) need only days, months and
/// years; a Foundation `Calendar` on Linux pulls ICU into memory-limited processes. The formulas are Howard
/// Hinnant's `days_from_civil` and `civil_from_days`: exact for every date whose day count stays within
/// ±2⁶¹ (far beyond any timestamp an `Int64` of microseconds can hold), with no intermediate product that
/// can overflow there.
public enum GregorianDays {
    /// Division rounding towards negative infinity (days before 1970 belong to the era that holds them).
    public static func floorDiv(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return (value % divisor != 0 && (value < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }

    /// The remainder that goes with ``floorDiv(_:_:)``: always in `0..<divisor` for a positive divisor.
    public static func floorMod(_ value: Int64, _ divisor: Int64) -> Int64 {
        value - floorDiv(value, divisor) * divisor
    }

    /// Days from 1970-01-01 to `year`-`month`-`day` (`month` 1…12; `day` is not checked against the month).
    public static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = floorDiv(shiftedYear, 400)
        let yearOfEra = shiftedYear - era * 400
        let monthFromMarch = (month + 9) % 12
        let dayOfYear = (153 * monthFromMarch + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of day `days` after 1970-01-01 (negative: before it).
    public static func date(days: Int64) -> (year: Int64, month: Int64, day: Int64) {
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
}
