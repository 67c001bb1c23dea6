import Foundation
import Testing
@_spi(Fuzzing) import TidingsMastodon

/// Replays Tests/Fixtures/fuzz/mastodon/ (the seeds of the FuzzMastodonWire target) through its checks.
@Suite(.timeLimit(.minutes(1)))
struct MastodonWireFuzzRegressionTests {
    static func fixtures() throws -> [(String, Data)] {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Fixtures/fuzz/mastodon").standardized
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0 != "README.md" }
        return try names.sorted().map { ($0, try Data(contentsOf: folder.appendingPathComponent($0))) }
    }

    @Test func everySeedDecodesAsItsType() throws {
        let seeds = try Self.fixtures()
        #expect(seeds.count == 10)
        for (name, body) in seeds {
            #expect(try MastodonWireFuzzing.decodeEverything(body) >= 1, "\(name) decoded as nothing")
        }
    }

    /// Cut and corrupted seeds fail only with `MastodonError` (64 cut points and 64 flipped bytes per seed).
    @Test func cutAndCorruptedSeedsFailOnlyWithTypedErrors() throws {
        for (name, body) in try Self.fixtures() {
            let bytes = [UInt8](body)
            let step = max(1, bytes.count / 64)
            for cut in stride(from: 0, to: bytes.count, by: step) {
                #expect(throws: Never.self, "\(name) cut at \(cut)") {
                    _ = try MastodonWireFuzzing.decodeEverything(Data(bytes[..<cut]))
                }
                var flipped = bytes
                flipped[cut] ^= 0x5A
                #expect(throws: Never.self, "\(name) flipped at \(cut)") {
                    _ = try MastodonWireFuzzing.decodeEverything(Data(flipped))
                }
            }
        }
    }
}
