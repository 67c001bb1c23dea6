import Foundation
import Testing
@_spi(Fuzzing) import TidingsPush

/// Replays Tests/Fixtures/fuzz/zoneinfo/ (real TZif files, version 1, slim, DST all year, a southern rule) through
/// the FuzzZoneInfo target's checks (Fuzz/), with every truncation and single-bit flip of each file's first 400
/// bytes (headers, counts, transitions and types): a problem found by fuzzing stays found.
@Suite(.timeLimit(.minutes(10))) struct ZoneInfoFuzzRegressionTests {
    @Test func seedsAndTheirMutationsKeepThePromises() async throws {
        let directory = ZoneInfoParserTests.fixtures
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(names.count >= 9)
        var checked = 0
        for name in names {
            let bytes = [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
            #expect(ZoneInfoFuzzing.check(bytes) == nil, "\(name)")
            #expect((try? ZoneInfo(identifier: name, tzif: bytes)) != nil, "\(name) is a valid seed")
            let reach = min(bytes.count, 400)
            for cut in 0..<bytes.count where cut < reach || cut > bytes.count - 64 {
                if let broken = ZoneInfoFuzzing.check(Array(bytes[..<cut])) {
                    Issue.record("\(name)[..<\(cut)]: \(broken)")
                }
                checked += 1
            }
            for index in 0..<reach {
                await Task.yield()  // long in a debug build: leave the cooperative pool to other suites
                for bit in 0..<8 {
                    var flipped = bytes
                    flipped[index] ^= UInt8(1 << bit)
                    if let broken = ZoneInfoFuzzing.check(flipped) {
                        Issue.record("\(name) bit \(index).\(bit): \(broken)")
                    }
                    checked += 1
                }
            }
        }
        #expect(checked > 10_000)
    }
}
