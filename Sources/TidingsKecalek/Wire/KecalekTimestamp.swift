import TidingsCore

/// A point in time as Kecalek writes it: ISO 8601 with or without fractional seconds and zone.
///
/// The server's own text is kept (``text``) because `after_ts` and `since` are sent back exactly
/// as the server wrote them; ordering and equality use ``microseconds`` since the Unix epoch in
/// UTC. A timestamp without a zone is UTC.
public struct KecalekTimestamp: Sendable, Hashable, Comparable, CustomStringConvertible, Codable {
    /// The text as received (or as formatted by ``init(microseconds:style:)``).
    public let text: String
    /// Microseconds since 1970-01-01T00:00:00Z; finer fractions are truncated.
    public let microseconds: Int64

    /// How ``init(microseconds:style:)`` writes a timestamp.
    public enum Style: Sendable {
        /// `2026-02-15T22:15:45` — the document's form: whole seconds, no zone.
        case seconds
        /// `2026-02-15T22:15:45.123456` — microseconds, no zone.
        case fractional
        /// `2026-02-15T22:15:45.123456Z` — microseconds with a zone designator.
        case fractionalZulu
        /// `2026-02-15T23:15:45.123+01:00` — milliseconds with a `+01:00` offset.
        case millisecondsWithOffset
    }

    /// Parses `text`; nil when it is not an ISO 8601 date-time.
    ///
    /// Accepts `T` or a space between date and time, 0–9 fraction digits, and `Z`, `±HH:MM`,
    /// `±HHMM`, `±HH` or nothing (UTC) as the zone.
    public init?(_ text: String) {
        guard let micros = Self.parse(Array(text.utf8)) else { return nil }
        self.text = text
        self.microseconds = micros
    }

    /// Formats `microseconds` since the epoch in `style`.
    public init(microseconds: Int64, style: Style = .fractional) {
        self.microseconds = microseconds
        self.text = Self.format(microseconds, style: style)
    }

    public static func == (lhs: KecalekTimestamp, rhs: KecalekTimestamp) -> Bool {
        lhs.microseconds == rhs.microseconds
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(microseconds) }

    public static func < (lhs: KecalekTimestamp, rhs: KecalekTimestamp) -> Bool {
        lhs.microseconds < rhs.microseconds
    }

    public var description: String { text }

    /// Decodes the ISO 8601 text, kept exactly as written.
    ///
    /// - Throws: `DecodingError.dataCorrupted` when the string is not an ISO 8601 date-time.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let parsed = KecalekTimestamp(text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "not an ISO 8601 date-time (\(text.utf8.count) bytes)")
        }
        self = parsed
    }

    /// Encodes ``text``, so a decoded timestamp encodes back to the server's own text.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }

    /// The same instant moved by `duration` (sub-microsecond parts are dropped), in `style`.
    ///
    /// Saturates at the ends of the `Int64` microsecond range instead of trapping.
    public func adding(_ duration: Duration, style: Style = .fractional) -> KecalekTimestamp {
        let (seconds, attoseconds) = duration.components
        let (scaled, scaleOverflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        let (delta, deltaOverflow) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000_000)
        let (sum, sumOverflow) = microseconds.addingReportingOverflow(delta)
        let saturated = duration < .zero ? Int64.min : Int64.max
        return KecalekTimestamp(
            microseconds: scaleOverflow || deltaOverflow || sumOverflow ? saturated : sum, style: style)
    }

    /// The latest instant the server could have written before this one at the resolution of ``text``
    /// (one second for `22:15:45`, a millisecond for `22:15:45.123`, a microsecond for six or more digits),
    /// written in the same shape: without a zone when ``text`` has none, in UTC with `Z` otherwise.
    ///
    /// Sent as `after_ts`/`since`, it makes a server that compares with `>` also answer what it stamped
    /// with this very timestamp, since the client cannot rely on timestamps being unique.
    public var oneTickEarlier: KecalekTimestamp {
        let bytes = Array(text.utf8)
        var digits = 0
        var hasZone = false
        if let dot = bytes.firstIndex(where: { $0 == 0x2E || $0 == 0x2C }) {
            var index = dot + 1
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                digits += 1
                index += 1
            }
            hasZone = index < bytes.count
        } else {
            // Past `YYYY-MM-DDTHH:MM:SS` (19 bytes) only a zone can follow.
            hasZone = bytes.count > 19
        }
        let tick: Int64 = [1_000_000, 100_000, 10_000, 1000, 100, 10, 1][min(digits, 6)]
        let (earlier, overflow) = microseconds.subtractingReportingOverflow(tick)
        let micros = overflow ? Int64.min : earlier
        if digits == 0 {
            let shaped = KecalekTimestamp(microseconds: micros, style: .seconds)
            return hasZone ? KecalekTimestamp(microseconds: micros, text: shaped.text + "Z") : shaped
        }
        let full = KecalekTimestamp(microseconds: micros, style: hasZone ? .fractionalZulu : .fractional)
        return full
    }

    private init(microseconds: Int64, text: String) {
        self.microseconds = microseconds
        self.text = text
    }

    // MARK: Parsing

    private static func parse(_ bytes: [UInt8]) -> Int64? {
        var index = 0
        func digits(_ count: Int) -> Int64? {
            guard index + count <= bytes.count else { return nil }
            var value: Int64 = 0
            for offset in 0..<count {
                let byte = bytes[index + offset]
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            index += count
            return value
        }
        func expect(_ allowed: Set<UInt8>) -> Bool {
            guard index < bytes.count, allowed.contains(bytes[index]) else { return false }
            index += 1
            return true
        }
        guard let year = digits(4), expect([0x2D]), let month = digits(2), expect([0x2D]), let day = digits(2),
            expect([0x54, 0x74, 0x20]), let hour = digits(2), expect([0x3A]), let minute = digits(2),
            expect([0x3A]), let second = digits(2)
        else { return nil }
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day), hour < 24,
            minute < 60, second <= 60
        else {
            return nil
        }
        var micros: Int64 = 0
        if index < bytes.count, bytes[index] == 0x2E || bytes[index] == 0x2C {
            index += 1
            var count = 0
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                if count < 6 { micros = micros * 10 + Int64(bytes[index] - 0x30) }
                count += 1
                index += 1
            }
            guard count > 0 else { return nil }
            for _ in count..<max(count, 6) { micros *= 10 }
        }
        var offsetSeconds: Int64 = 0
        if index < bytes.count {
            let sign = bytes[index]
            if sign == 0x5A || sign == 0x7A {
                index += 1
            } else if sign == 0x2B || sign == 0x2D {
                index += 1
                guard let offsetHours = digits(2) else { return nil }
                var offsetMinutes: Int64 = 0
                if index < bytes.count {
                    _ = expect([0x3A])
                    guard let parsed = digits(2) else { return nil }
                    offsetMinutes = parsed
                }
                offsetSeconds = (offsetHours * 3600 + offsetMinutes * 60) * (sign == 0x2D ? -1 : 1)
            } else {
                return nil
            }
        }
        guard index == bytes.count else { return nil }
        let days = GregorianDays.days(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return seconds * 1_000_000 + micros
    }

    /// Days of `month` in `year` (proleptic Gregorian), so `2026-02-31` is refused rather than rolled over.
    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    // MARK: Formatting

    private static func format(_ microseconds: Int64, style: Style) -> String {
        let offsetSeconds: Int64 = style == .millisecondsWithOffset ? 3600 : 0
        // `microseconds` may come from a cache file; at the very end of the range the offset is dropped
        // rather than trapping.
        let (shifted, overflow) = microseconds.addingReportingOverflow(offsetSeconds * 1_000_000)
        let local = overflow ? microseconds : shifted
        var seconds = local / 1_000_000
        var micros = local % 1_000_000
        if micros < 0 {
            micros += 1_000_000
            seconds -= 1
        }
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 {
            secondOfDay += 86_400
            days -= 1
        }
        let (year, month, day) = GregorianDays.date(days: days)
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        var text = "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T"
        text += "\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))"
        switch style {
        case .seconds: break
        case .fractional: text += "." + pad(micros, 6)
        case .fractionalZulu: text += "." + pad(micros, 6) + "Z"
        case .millisecondsWithOffset: text += "." + pad(micros / 1000, 3) + "+01:00"
        }
        return text
    }
}
