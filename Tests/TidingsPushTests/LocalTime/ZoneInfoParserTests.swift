import Foundation
import Testing

@testable import TidingsPush

/// The TZif reader (RFC 8536) and POSIX TZ strings: versions 1–3, the footer after the last transition, DST all
/// year, southern and half-hour rules, and hostile input that must end in a typed error.
@Suite(.timeLimit(.minutes(1))) struct ZoneInfoParserTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Fixtures/fuzz/zoneinfo").standardized

    static func fixture(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: fixtures.appendingPathComponent(name)))
    }

    /// Seconds since 1970 of a UTC date and time.
    static func utc(_ year: Int64, _ month: Int64, _ day: Int64, _ hour: Int64 = 0, _ minute: Int64 = 0) -> Int64 {
        CivilTime.days(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60
    }

    @Test func civilDatesRoundTrip() {
        #expect(CivilTime.days(year: 1970, month: 1, day: 1) == 0)
        #expect(CivilTime.days(year: 2000, month: 3, day: 1) == 11_017)
        #expect(CivilTime.days(year: 1969, month: 12, day: 31) == -1)
        for days in stride(from: Int64(-800_000), through: 800_000, by: 997) {
            let date = CivilTime.date(days: days)
            #expect(CivilTime.days(year: date.year, month: date.month, day: date.day) == days)
        }
        #expect(CivilTime.weekday(days: 0) == 4)  // a Thursday
        #expect(CivilTime.seconds(-0.5) == -1)
        #expect(CivilTime.seconds(.infinity) == CivilTime.instantRange.upperBound)
        #expect(CivilTime.seconds(.nan) == 0)
    }

    @Test func versionOneFileReadsItsTransitionsAndKeepsTheLastTypeAfterThem() throws {
        let zone = try ZoneInfo(identifier: "v1", tzif: Self.fixture("v1-europe-berlin.tzif"))
        #expect(zone.utcOffset(atUnixTime: Self.utc(2026, 1, 15)) == 3600)
        #expect(zone.utcOffset(atUnixTime: Self.utc(2026, 7, 15)) == 7200)
        #expect(zone.utcOffset(atUnixTime: Self.utc(2026, 3, 29, 0, 59)) == 3600)
        #expect(zone.utcOffset(atUnixTime: Self.utc(2026, 3, 29, 1)) == 7200)
        // No footer: past 2037 the last transition's type (CET) stays.
        #expect(zone.utcOffset(atUnixTime: Self.utc(2050, 7, 1)) == 3600)
    }

    @Test func slimFileHandsOverToItsFooter() throws {
        let zone = try ZoneInfo(identifier: "slim", tzif: Self.fixture("v2-slim-cet.tzif"))
        #expect(zone.utcOffset(atUnixTime: Self.utc(2019, 7, 1)) == 3600)  // before the first transition: type 0
        #expect(zone.utcOffset(atUnixTime: Self.utc(2020, 7, 1)) == 7200)
        #expect(zone.utcOffset(atUnixTime: Self.utc(2026, 3, 29, 0, 59)) == 3600)
        #expect(zone.utcOffset(atUnixTime: Self.utc(2026, 3, 29, 1)) == 7200)
        #expect(zone.utcOffset(atUnixTime: Self.utc(2026, 10, 25, 0, 59)) == 7200)
        #expect(zone.utcOffset(atUnixTime: Self.utc(2026, 10, 25, 1)) == 3600)
        #expect(zone.nextTransition(afterUnixTime: Self.utc(2026, 1, 1)) == Self.utc(2026, 3, 29, 1))
        #expect(zone.nextTransition(afterUnixTime: Self.utc(2026, 3, 29, 1)) == Self.utc(2026, 10, 25, 1))
        // 02:30 on 29 March 2026 does not exist: the gap ends at 03:00 CEST (01:00Z); 02:30 on 25 October
        // happens twice: first at 00:30Z.
        let march = CivilTime.days(year: 2026, month: 3, day: 29) * 86_400 + 9000
        #expect(zone.firstInstant(atLocalUnixTime: march) == Self.utc(2026, 3, 29, 1))
        let october = CivilTime.days(year: 2026, month: 10, day: 25) * 86_400 + 9000
        #expect(zone.firstInstant(atLocalUnixTime: october) == Self.utc(2026, 10, 25, 0, 30))
    }

    @Test func daylightSavingAllYearIsDaylightSavingEveryDay() throws {
        let zone = try ZoneInfo(identifier: "v3", tzif: Self.fixture("v3-all-year-dst.tzif"))
        for instant in stride(from: Self.utc(2020, 1, 1), to: Self.utc(2030, 1, 1), by: 86_400 * 3 + 3557) {
            #expect(zone.utcOffset(atUnixTime: instant) == -4 * 3600)
        }
        for year: Int64 in 2020...2030 {
            #expect(zone.utcOffset(atUnixTime: Self.utc(year, 1, 1, 4, 30)) == -4 * 3600)
            #expect(zone.utcOffset(atUnixTime: Self.utc(year, 12, 31, 23, 59)) == -4 * 3600)
        }
        #expect(zone.nextTransition(afterUnixTime: Self.utc(2025, 6, 1)) == nil)
    }

    @Test func southernHalfHourRule() throws {
        let zone = try ZoneInfo(identifier: "lh", tzif: Self.fixture("v2-lord-howe-rule.tzif"))
        #expect(zone.utcOffset(atUnixTime: Self.utc(2030, 1, 15)) == 11 * 3600)
        #expect(zone.utcOffset(atUnixTime: Self.utc(2030, 7, 15)) == 10 * 3600 + 1800)
        // First Sunday of October 2030 is the 6th: 02:00 +10:30 = 15:30Z on the 5th.
        #expect(zone.nextTransition(afterUnixTime: Self.utc(2030, 7, 15)) == Self.utc(2030, 10, 5, 15, 30))
    }

    @Test func posixStrings() throws {
        let india = try ZoneInfo(posixTZ: "<+0530>-5:30")
        #expect(india.utcOffset(atUnixTime: 0) == 19_800)
        #expect(india.nextTransition(afterUnixTime: 0) == nil)
        let newYork = try ZoneInfo(posixTZ: "EST5EDT,M3.2.0,M11.1.0")
        #expect(newYork.utcOffset(atUnixTime: Self.utc(2026, 3, 8, 6, 59)) == -5 * 3600)
        #expect(newYork.utcOffset(atUnixTime: Self.utc(2026, 3, 8, 7)) == -4 * 3600)
        let julian = try ZoneInfo(posixTZ: "XXX0YYY,J60/0,J300/0")  // J60 is 1 March even in a leap year
        #expect(julian.nextTransition(afterUnixTime: Self.utc(2028, 1, 1)) == Self.utc(2028, 3, 1))
        let zeroBased = try ZoneInfo(posixTZ: "XXX0YYY,59/0,300/0")  // day 59 is 29 February in a leap year
        #expect(zeroBased.nextTransition(afterUnixTime: Self.utc(2028, 1, 1)) == Self.utc(2028, 2, 29))
        let fifth = try ZoneInfo(posixTZ: "XXX0YYY,M2.5.0/0,M11.1.0")  // the last Sunday of February 2026 is the 22nd
        #expect(fifth.nextTransition(afterUnixTime: Self.utc(2026, 1, 1)) == Self.utc(2026, 2, 22))
        for bad in [
            "", "E", "EST", "EST5EDT", "EST5EDT,M3.2.0", "EST25", "EST5EDT,M13.1.0,M11.1.0", "EST5EDT,M3.6.0,M11.1.0",
            "EST5EDT,J0,J300", "EST5EDT,366,300", "EST5EDT,M3.2.0/168,M11.1.0", "<AB>5", "<ABC5", "EST5:60",
            "EST5EDT,M3.2.0,M11.1.0x", "EST1234", "EST5EDT,M3.2.7,M11.1.0",
        ] {
            #expect(throws: ZoneInfoError.invalidPOSIXString, "\(bad)") { try ZoneInfo(posixTZ: bad) }
        }
    }

    @Test func hostileHeadersAreTypedErrors() throws {
        let berlin = try Self.fixture("Europe-Berlin.tzif")
        #expect(throws: ZoneInfoError.notTZif) { try ZoneInfo(identifier: "x", tzif: []) }
        #expect(throws: ZoneInfoError.notTZif) { try ZoneInfo(identifier: "x", tzif: Array("TZiX2".utf8) + berlin) }
        var version = berlin
        version[4] = UInt8(ascii: "1")
        #expect(throws: ZoneInfoError.notTZif) { try ZoneInfo(identifier: "x", tzif: version) }
        // Counts: 0xFFFFFFFF transitions is far more than the file holds; zero types or designations break §3.1.
        func withCount(_ index: Int, _ value: UInt32) -> [UInt8] {
            var bytes = berlin
            for (offset, byte) in withUnsafeBytes(of: value.bigEndian, Array.init).enumerated() {
                bytes[20 + index * 4 + offset] = byte
            }
            return bytes
        }
        #expect(throws: ZoneInfoError.truncated) { try ZoneInfo(identifier: "x", tzif: withCount(3, .max)) }
        #expect(throws: ZoneInfoError.truncated) { try ZoneInfo(identifier: "x", tzif: withCount(2, .max)) }
        #expect(throws: ZoneInfoError.invalidCounts) { try ZoneInfo(identifier: "x", tzif: withCount(4, 0)) }
        #expect(throws: ZoneInfoError.invalidCounts) { try ZoneInfo(identifier: "x", tzif: withCount(4, 300)) }
        #expect(throws: ZoneInfoError.invalidCounts) { try ZoneInfo(identifier: "x", tzif: withCount(5, 0)) }
        #expect(throws: ZoneInfoError.invalidCounts) { try ZoneInfo(identifier: "x", tzif: withCount(0, 3)) }
        // Every truncation is refused with a typed error (never a trap, never accepted).
        for cut in 0..<berlin.count {
            #expect(throws: ZoneInfoError.self) { try ZoneInfo(identifier: "x", tzif: Array(berlin[..<cut])) }
        }
    }

    @Test func hostileBodiesAreTypedErrors() throws {
        let slim = try Self.fixture("v2-slim-cet.tzif")
        // This fixture's 64-bit data block starts after two headers and the 21-byte version 1 block: two
        // transitions (8 bytes each), their type indices, two 6-byte types, then 9 designation bytes.
        let v2 = 44 + 2 * 6 + 9 + 44
        var unordered = slim  // the second transition (now 0) precedes the first
        unordered.replaceSubrange((v2 + 8)..<(v2 + 16), with: [0, 0, 0, 0, 0, 0, 0, 0])
        #expect(throws: ZoneInfoError.invalidTransitions) { try ZoneInfo(identifier: "x", tzif: unordered) }
        var badIndex = slim
        badIndex[v2 + 16] = 2
        #expect(throws: ZoneInfoError.invalidTransitions) { try ZoneInfo(identifier: "x", tzif: badIndex) }
        var badOffset = slim
        badOffset.replaceSubrange((v2 + 18)..<(v2 + 22), with: [0x80, 0, 0, 0])  // -2^31
        #expect(throws: ZoneInfoError.invalidTimeType) { try ZoneInfo(identifier: "x", tzif: badOffset) }
        var badDST = slim
        badDST[v2 + 22] = 2
        #expect(throws: ZoneInfoError.invalidTimeType) { try ZoneInfo(identifier: "x", tzif: badDST) }
        var badDesignation = slim
        badDesignation[v2 + 23] = 200
        #expect(throws: ZoneInfoError.invalidTimeType) { try ZoneInfo(identifier: "x", tzif: badDesignation) }
        #expect(throws: ZoneInfoError.invalidFooter) { try ZoneInfo(identifier: "x", tzif: slim.dropLast()) }
        #expect(throws: ZoneInfoError.invalidFooter) {
            try ZoneInfo(identifier: "x", tzif: Array(slim.dropLast(28)) + Array("\nCET-1CEST\n".utf8))
        }
        // An empty footer is allowed: the last transition's type then stays.
        let empty = try ZoneInfo(identifier: "x", tzif: Array(slim.dropLast(28)) + [0x0A, 0x0A])
        #expect(empty.utcOffset(atUnixTime: Self.utc(2030, 7, 1)) == 3600)
    }

    @Test func identifiersCannotLeaveTheZoneDirectory() {
        for bad in [
            "", "/etc/passwd", "../etc/passwd", "Europe/../../etc/passwd", "Europe//Berlin", "Europe/.", "a b",
            "Europe/Berlin\0", String(repeating: "a", count: 256),
        ] {
            #expect(!ZoneInfo.isValidIdentifier(bad), "\(bad)")
            #expect(throws: ZoneInfoError.invalidIdentifier) { try ZoneInfo.named(bad) }
        }
        for good in ["Europe/Berlin", "Etc/GMT+5", "America/Port-au-Prince", "UTC", "America/Argentina/Buenos_Aires"] {
            #expect(ZoneInfo.isValidIdentifier(good), "\(good)")
        }
        #expect(throws: ZoneInfoError.self) { try ZoneInfo.named("Nowhere/Atlantis") }
    }

    @Test(.enabled(if: ZoneInfoFoundationTests.hasZoneData)) func theDevicesZoneAsTheCLibraryReadsIt() throws {
        #expect(try ZoneInfo.current(tz: "") == .utc)
        #expect(try ZoneInfo.current(tz: ":") == .utc)
        #expect(try ZoneInfo.current(tz: nil, localtime: "/nonexistent/localtime") == .utc)
        #expect(try ZoneInfo.current(tz: ":Europe/Berlin").identifier == "Europe/Berlin")
        #expect(try ZoneInfo.current(tz: "Asia/Kolkata").utcOffset(atUnixTime: 0) == 19_800)
        let byPath = try ZoneInfo.current(tz: ZoneInfo.systemDirectory + "/Australia/Lord_Howe")
        #expect(byPath.identifier == "Australia/Lord_Howe")
        let rule = try ZoneInfo.current(tz: "CET-1CEST,M3.5.0,M10.5.0/3")
        #expect(rule.utcOffset(atUnixTime: Self.utc(2026, 7, 1)) == 7200)
        #expect(throws: ZoneInfoError.invalidPOSIXString) { try ZoneInfo.current(tz: "Nowhere/Atlantis") }
        // The link's target names the zone (/etc/localtime → …/zoneinfo/Pacific/Chatham).
        let link = FileManager.default.temporaryDirectory.appendingPathComponent("localtime-\(UUID().uuidString)")
        try FileManager.default.createSymbolicLink(
            atPath: link.path, withDestinationPath: ZoneInfo.systemDirectory + "/Pacific/Chatham")
        defer { try? FileManager.default.removeItem(at: link) }
        let linked = try ZoneInfo.current(tz: nil, localtime: link.path)
        #expect(linked.identifier == "Pacific/Chatham")
        #expect(linked.utcOffset(atUnixTime: Self.utc(2026, 7, 1)) == 12 * 3600 + 45 * 60)
    }
}
