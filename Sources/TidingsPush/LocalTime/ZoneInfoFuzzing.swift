/// The checks the `FuzzZoneInfo` target (Fuzz/) and `ZoneInfoFuzzRegressionTests` run on arbitrary bytes, in one
/// place so the replayed seeds test exactly what the fuzzer does.
@_spi(Fuzzing) public enum ZoneInfoFuzzing {
    /// Parses `bytes` as a TZif file and, when they are accepted, asks the zone about instants taken from the
    /// bytes and around its transitions. Returns the first broken promise, nil when every one held. A refusal
    /// is always a ``ZoneInfoError`` (typed throws); a trap anywhere is a finding of its own.
    public static func check(_ bytes: [UInt8]) -> String? {
        // The same bytes as a POSIX TZ string: refused or a zone, never a trap.
        if bytes.count <= 256, let rule = try? ZoneInfo(posixTZ: String(decoding: bytes, as: UTF8.self)),
            let broken = promises(of: rule, instants: instants(from: bytes))
        {
            return "TZ string: " + broken
        }
        guard let zone = try? ZoneInfo(identifier: "fuzz", tzif: bytes) else { return nil }
        return promises(of: zone, instants: instants(from: bytes))
    }

    /// Instants from the input's last bytes, plus fixed ones across the range.
    private static func instants(from bytes: [UInt8]) -> [Int64] {
        var result: [Int64] = [0, -1, 1_800_000_000, -2_208_988_800, 4_102_444_800, 253_402_300_799, Int64.max, .min]
        var value: UInt64 = 0
        for (index, byte) in bytes.suffix(32).enumerated() {
            value = value << 8 | UInt64(byte)
            if index % 8 == 7 { result.append(Int64(bitPattern: value)) }
        }
        return result
    }

    private static func promises(of zone: ZoneInfo, instants: [Int64]) -> String? {
        for instant in instants {
            let offset = zone.utcOffset(atUnixTime: instant)
            guard TZifParser.offsetRange.contains(Int64(offset)) else { return "offset \(offset) at \(instant)" }
            var cursor = CivilTime.clamp(instant)
            for _ in 0..<4 {
                guard let next = zone.nextTransition(afterUnixTime: cursor) else { break }
                guard next > cursor else { return "transition \(next) not after \(cursor)" }
                guard zone.utcOffset(atUnixTime: next) != zone.utcOffset(atUnixTime: next - 1) else {
                    return "transition \(next) changes no offset"
                }
                cursor = next
            }
            // A wall-clock reading's instants, earliest first, each showing that reading or ending a gap after it.
            let local = CivilTime.clamp(instant)
            let found = zone.instants(atLocalUnixTime: local)
            guard !found.isEmpty, found == found.sorted() else { return "local \(local): instants \(found)" }
            let inRange =
                CivilTime.instantRange.contains(local - 2 * CivilTime.secondsPerDay)
                && CivilTime.instantRange.contains(local + 2 * CivilTime.secondsPerDay)
            for first in found where inRange {
                let shown = first + Int64(zone.utcOffset(atUnixTime: first))
                if shown < local { return "local \(local) shown at \(shown)" }
                if shown != local, zone.utcOffset(atUnixTime: first - 1) >= zone.utcOffset(atUnixTime: first) {
                    return "local \(local) resolved to \(first), which ends no gap"
                }
            }
        }
        return nil
    }
}
