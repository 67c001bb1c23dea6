import Foundation

/// `ZoneInfo` is one time zone's UTC offsets over time, read from its TZif file (RFC 8536) or a POSIX TZ string,
/// without Foundation's `TimeZone` or `Calendar`: on Linux those load ICU's zone data, a few megabytes a
/// notification extension cannot spare (issue 12's P2).
///
/// It answers the two questions local-time rules ask: the offset at an instant (``utcOffset(atUnixTime:)``) and
/// the instant a local wall-clock reading first happens (``firstInstant(atLocalUnixTime:)``). Instants are whole
/// seconds since 1970-01-01T00:00:00Z, clamped to about ±142 million years; the answers are pure functions of the
/// rules, so the same instant always gives the same answer.
public struct ZoneInfo: Hashable, Sendable {
    /// The zone's identifier (`Europe/Berlin`), or the TZ string or file it was read from.
    public let identifier: String
    private let transitions: [Int64]
    private let offsets: [Int64]
    private let initialOffset: Int64
    private let footer: POSIXZoneRule?

    /// The zone described by TZif `bytes`.
    ///
    /// - Throws: ``ZoneInfoError`` when the bytes are not a well-formed TZif file (typed; the parser never traps).
    public init(identifier: String, tzif bytes: [UInt8]) throws(ZoneInfoError) {
        var parser = TZifParser(bytes)
        let rules = try parser.parse()
        self.identifier = identifier
        transitions = rules.transitions
        offsets = rules.offsets
        initialOffset = rules.initialOffset
        footer = rules.footer
    }

    /// The zone a POSIX TZ string describes (`CET-1CEST,M3.5.0,M10.5.0/3`, `<+0530>-5:30`), as `TZ` may hold it.
    ///
    /// - Throws: ``ZoneInfoError/invalidPOSIXString`` for anything else.
    public init(posixTZ text: String) throws(ZoneInfoError) {
        let rule = try POSIXZoneRule(parsing: Array(text.utf8))
        identifier = text
        transitions = []
        offsets = []
        initialOffset = rule.standardOffset
        footer = rule
    }

    /// UTC: offset zero at every instant.
    public static let utc = ZoneInfo(identifier: "UTC", fixedOffset: 0)

    private init(identifier: String, fixedOffset: Int64) {
        self.identifier = identifier
        transitions = []
        offsets = []
        initialOffset = fixedOffset
        footer = nil
    }

    /// Seconds east of UTC at `instant` (seconds since 1970, clamped): before the first transition time type 0's,
    /// after the last the footer's rule when there is one (RFC 8536 §3.2, §3.3).
    public func utcOffset(atUnixTime instant: Int64) -> Int {
        let instant = CivilTime.clamp(instant)
        guard let first = transitions.first, let last = transitions.last else {
            return Int(footer?.utcOffset(at: instant) ?? initialOffset)
        }
        if instant < first { return Int(initialOffset) }
        if instant >= last, let footer { return Int(footer.utcOffset(at: instant)) }
        return Int(offsets[lastTransitionIndex(atOrBefore: instant)])
    }

    /// Seconds east of UTC at `date`.
    public func utcOffset(at date: Date) -> Int {
        utcOffset(atUnixTime: CivilTime.seconds(date.timeIntervalSince1970))
    }

    /// The first instant after `instant` at which the offset changes (a file's transitions that change only the
    /// abbreviation or DST flag are passed over); nil when it never changes again.
    public func nextTransition(afterUnixTime instant: Int64) -> Int64? {
        var cursor = CivilTime.clamp(instant)
        // Each step moves past at least one raw transition; a zone changes its offset within a few of them, and a
        // file whose transitions never change it ends at its last one, so the bound is never what stops a real zone.
        for _ in 0..<(transitions.count + 8) {
            guard let next = rawTransition(after: cursor) else { return nil }
            if utcOffset(atUnixTime: next) != utcOffset(atUnixTime: next - 1) { return next }
            cursor = next
        }
        return nil
    }

    private func rawTransition(after instant: Int64) -> Int64? {
        if let last = transitions.last, instant < last {
            return transitions[lastTransitionIndex(atOrBefore: instant) + 1]
        }
        return footer?.nextTransition(after: instant).flatMap { $0 <= CivilTime.instantRange.upperBound ? $0 : nil }
    }

    /// The index of the last transition at or before `instant`; -1 when all are after it.
    private func lastTransitionIndex(atOrBefore instant: Int64) -> Int {
        var low = 0
        var high = transitions.count
        while low < high {
            let middle = low + (high - low) / 2
            if transitions[middle] <= instant { low = middle + 1 } else { high = middle }
        }
        return low - 1
    }

    /// Every instant whose local wall-clock reading is `local` (seconds since 1970-01-01T00:00 local time),
    /// earliest first: one for an ordinary reading, two for one in the hour a DST change repeats, and for a reading
    /// a change skips the instant the skip ends (the first local time after it that exists). Never empty.
    public func instants(atLocalUnixTime local: Int64) -> [Int64] {
        let local = CivilTime.clamp(local)
        // Offsets are within ±26 hours, so every instant lies within a day and a bit of `local`: the intervals
        // between the transitions of the four days around it hold them all. Walking the raw transitions (also
        // those that keep the offset) is exact, and only those within the window are walked.
        let end = local + 2 * CivilTime.secondsPerDay
        var lower = local - 2 * CivilTime.secondsPerDay
        var offset = Int64(utcOffset(atUnixTime: lower))
        var result: [Int64] = []
        for _ in 0..<(transitions.count + 16) {
            let candidate = local - offset
            let upper = rawTransition(after: lower)
            if candidate >= lower, upper.map({ candidate < $0 }) ?? true { result.append(candidate) }
            guard let upper, upper <= end else { break }
            let nextOffset = Int64(utcOffset(atUnixTime: upper))
            // The reading falls after this interval ends but before the next one starts showing it: skipped.
            if candidate >= upper, local - nextOffset < upper { result.append(upper) }
            lower = upper
            offset = nextOffset
        }
        return result.isEmpty ? [local - offset] : result
    }

    /// The first of ``instants(atLocalUnixTime:)``: a repeated reading's first occurrence, a skipped one's end.
    public func firstInstant(atLocalUnixTime local: Int64) -> Int64 {
        instants(atLocalUnixTime: local)[0]
    }
}
