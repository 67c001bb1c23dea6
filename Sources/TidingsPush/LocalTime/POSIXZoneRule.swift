/// A POSIX TZ string (`CET-1CEST,M3.5.0,M10.5.0/3`): the rule a TZif footer gives for every instant after the
/// file's last transition (RFC 8536 §3.3, with its version 3 extensions: rule times from −167 to 167 hours, so
/// DST all year can be written).
struct POSIXZoneRule: Hashable, Sendable {
    /// Which day of a year a DST change falls on.
    enum Day: Hashable, Sendable {
        /// `Jn`: day 1…365, February 29 never counted.
        case julianWithoutLeapDay(Int64)
        /// `n`: day 0…365, February 29 counted.
        case zeroBased(Int64)
        /// `Mm.w.d`: weekday `d` (0 = Sunday) of week `w` (1…5, 5 = the last) of month `m`.
        case monthWeekDay(month: Int64, week: Int64, weekday: Int64)
    }

    /// DST and its changes; the offsets are seconds east of UTC.
    struct Daylight: Hashable, Sendable {
        var offset: Int64
        var startDay: Day
        /// Seconds after local (standard) midnight of the start day.
        var startTime: Int64
        var endDay: Day
        /// Seconds after local (daylight) midnight of the end day.
        var endTime: Int64
    }

    /// Standard time's offset, seconds east of UTC (POSIX writes it west: `CET-1` is +1 hour).
    var standardOffset: Int64
    /// Nil when the zone has no DST.
    var daylight: Daylight?

    /// The offset from UTC at `instant` (clamped).
    func utcOffset(at instant: Int64) -> Int64 {
        guard let daylight else { return standardOffset }
        let year = CivilTime.date(days: CivilTime.floorDiv(instant + standardOffset, CivilTime.secondsPerDay)).year
        var offset = standardOffset
        // The latest change at or before `instant` decides. A rule time may move a change up to a week into the
        // next year or out of the previous one (±167 h), so the changes of two years back to one ahead are the
        // only candidates: every change of an earlier year precedes both of the year two back. A narrower window
        // would let the answer jump where the computed year does (found by FuzzZoneInfo: a DST end at
        // `J365/52` falls after the next year's start).
        for change in changes(years: (year - 2)...(year + 1), daylight) where change.instant <= instant {
            offset = change.isDaylight ? daylight.offset : standardOffset
        }
        return offset
    }

    /// The first instant after `instant` at which the offset changes; nil when it never does.
    func nextTransition(after instant: Int64) -> Int64? {
        guard let daylight, daylight.offset != standardOffset else { return nil }
        let year = CivilTime.date(days: CivilTime.floorDiv(instant + standardOffset, CivilTime.secondsPerDay)).year
        for change in changes(years: (year - 1)...(year + 2), daylight) where change.instant > instant {
            if utcOffset(at: change.instant) != utcOffset(at: change.instant - 1) { return change.instant }
        }
        return nil
    }

    /// The starts and ends of DST in `years`, earliest first; an end and a start at the same instant (DST all
    /// year) are ordered end first, so DST stays in force.
    private func changes(years: ClosedRange<Int64>, _ daylight: Daylight) -> [(instant: Int64, isDaylight: Bool)] {
        var result: [(instant: Int64, isDaylight: Bool)] = []
        for year in years {
            let start = Self.day(daylight.startDay, year: year) * CivilTime.secondsPerDay + daylight.startTime
            let end = Self.day(daylight.endDay, year: year) * CivilTime.secondsPerDay + daylight.endTime
            result.append((start - standardOffset, true))
            result.append((end - daylight.offset, false))
        }
        return result.sorted { ($0.instant, $0.isDaylight ? 1 : 0) < ($1.instant, $1.isDaylight ? 1 : 0) }
    }

    /// Days from 1970-01-01 to `day` in `year`.
    static func day(_ day: Day, year: Int64) -> Int64 {
        let januaryFirst = CivilTime.days(year: year, month: 1, day: 1)
        switch day {
        case .julianWithoutLeapDay(let number):
            return januaryFirst + number - 1 + (CivilTime.isLeapYear(year) && number >= 60 ? 1 : 0)
        case .zeroBased(let number):
            return januaryFirst + number
        case .monthWeekDay(let month, let week, let weekday):
            let first = CivilTime.days(year: year, month: month, day: 1)
            var result = first + CivilTime.floorMod(weekday - CivilTime.weekday(days: first), 7) + (week - 1) * 7
            let length = CivilTime.monthLength(year: year, month: month)
            while result >= first + length { result -= 7 }
            return result
        }
    }
}

extension POSIXZoneRule {
    /// Parses a POSIX TZ string; an empty one is not a rule (the caller decides what that means).
    ///
    /// - Throws: ``ZoneInfoError/invalidPOSIXString`` for anything else, including DST without change rules
    ///   (POSIX leaves their default to the implementation; no TZif footer omits them).
    init(parsing text: some Collection<UInt8>) throws(ZoneInfoError) {
        var scanner = POSIXScanner(Array(text))
        try scanner.name()
        standardOffset = -(try scanner.time(maximumHours: 24))
        guard !scanner.isAtEnd else {
            daylight = nil
            return
        }
        try scanner.name()
        var daylightOffset = standardOffset + 3600
        if scanner.peek != UInt8(ascii: ",") { daylightOffset = -(try scanner.time(maximumHours: 24)) }
        try scanner.expect(UInt8(ascii: ","))
        let startDay = try scanner.day()
        let startTime = try scanner.optionalRuleTime()
        try scanner.expect(UInt8(ascii: ","))
        let endDay = try scanner.day()
        let endTime = try scanner.optionalRuleTime()
        guard scanner.isAtEnd else { throw .invalidPOSIXString }
        daylight = Daylight(
            offset: daylightOffset, startDay: startDay, startTime: startTime, endDay: endDay, endTime: endTime)
    }
}

/// Reads the pieces of a POSIX TZ string; every read checks the end of the input first.
private struct POSIXScanner {
    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { index >= bytes.count }
    var peek: UInt8? { isAtEnd ? nil : bytes[index] }

    mutating func expect(_ byte: UInt8) throws(ZoneInfoError) {
        guard peek == byte else { throw .invalidPOSIXString }
        index += 1
    }

    /// A zone abbreviation: three or more letters, or `<…>` holding three or more letters, digits, `+` or `-`.
    mutating func name() throws(ZoneInfoError) {
        let isLetter = { (byte: UInt8) in (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
        var count = 0
        if peek == UInt8(ascii: "<") {
            index += 1
            while let byte = peek, byte != UInt8(ascii: ">") {
                guard isLetter(byte) || (0x30...0x39).contains(byte) || byte == 0x2B || byte == 0x2D else {
                    throw .invalidPOSIXString
                }
                index += 1
                count += 1
            }
            try expect(UInt8(ascii: ">"))
        } else {
            while let byte = peek, isLetter(byte) {
                index += 1
                count += 1
            }
        }
        guard count >= 3 else { throw .invalidPOSIXString }
    }

    /// `[+|-]hh[:mm[:ss]]` in seconds, hours at most `maximumHours`.
    mutating func time(maximumHours: Int64) throws(ZoneInfoError) -> Int64 {
        var sign: Int64 = 1
        if peek == UInt8(ascii: "+") {
            index += 1
        } else if peek == UInt8(ascii: "-") {
            sign = -1
            index += 1
        }
        let hours = try number(maximumDigits: 3, range: 0...maximumHours)
        var seconds = hours * 3600
        if peek == UInt8(ascii: ":") {
            index += 1
            seconds += try number(maximumDigits: 2, range: 0...59) * 60
            if peek == UInt8(ascii: ":") {
                index += 1
                seconds += try number(maximumDigits: 2, range: 0...59)
            }
        }
        return sign * seconds
    }

    /// `/time` after a change's day, or 02:00 without it.
    mutating func optionalRuleTime() throws(ZoneInfoError) -> Int64 {
        guard peek == UInt8(ascii: "/") else { return 2 * 3600 }
        index += 1
        return try time(maximumHours: 167)
    }

    /// `Jn`, `n` or `Mm.w.d`.
    mutating func day() throws(ZoneInfoError) -> POSIXZoneRule.Day {
        switch peek {
        case UInt8(ascii: "J"):
            index += 1
            return .julianWithoutLeapDay(try number(maximumDigits: 3, range: 1...365))
        case UInt8(ascii: "M"):
            index += 1
            let month = try number(maximumDigits: 2, range: 1...12)
            try expect(UInt8(ascii: "."))
            let week = try number(maximumDigits: 1, range: 1...5)
            try expect(UInt8(ascii: "."))
            let weekday = try number(maximumDigits: 1, range: 0...6)
            return .monthWeekDay(month: month, week: week, weekday: weekday)
        default:
            return .zeroBased(try number(maximumDigits: 3, range: 0...365))
        }
    }

    /// One to `maximumDigits` decimal digits whose value lies in `range`.
    private mutating func number(maximumDigits: Int, range: ClosedRange<Int64>) throws(ZoneInfoError) -> Int64 {
        var value: Int64 = 0
        var digits = 0
        while let byte = peek, (0x30...0x39).contains(byte) {
            guard digits < maximumDigits else { throw .invalidPOSIXString }
            value = value * 10 + Int64(byte - 0x30)
            digits += 1
            index += 1
        }
        guard digits > 0, range.contains(value) else { throw .invalidPOSIXString }
        return value
    }
}
