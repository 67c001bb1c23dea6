import Foundation

/// `ISO8601UTC` writes an instant as `2026-12-02T07:00:00Z` (whole seconds, rounded down), the text of
/// `Date.formatted(.iso8601)`, without Foundation's format styles: on Linux those load ICU's data, ~2.4 MB of a
/// notification extension's peak memory for printing one hold time (issue 12's P2, measured).
public enum ISO8601UTC {
    /// `date` in UTC as `YYYY-MM-DDTHH:MM:SSZ`; years before 1 or after 9999 keep their sign and all digits.
    public static func string(from date: Date) -> String {
        let instant = CivilTime.seconds(date.timeIntervalSince1970)
        let days = CivilTime.floorDiv(instant, CivilTime.secondsPerDay)
        let second = CivilTime.floorMod(instant, CivilTime.secondsPerDay)
        let civil = CivilTime.date(days: days)
        let year = civil.year < 0 ? "-" + padded(-civil.year, 4) : padded(civil.year, 4)
        return year + "-" + padded(civil.month, 2) + "-" + padded(civil.day, 2) + "T" + padded(second / 3600, 2) + ":"
            + padded(second / 60 % 60, 2) + ":" + padded(second % 60, 2) + "Z"
    }

    private static func padded(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
