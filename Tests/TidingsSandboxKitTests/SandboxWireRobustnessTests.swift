import Foundation
import PeerSupport
import Testing
import TidingsNet

@testable import TidingsSandboxKit

/// Bad bytes from a client get a typed error, never a trap: random and mutated request heads and
/// multipart bodies, from a fixed seed so a failure reproduces.
@Suite(.timeLimit(.minutes(1))) struct SandboxWireRobustnessTests {
    /// SplitMix64, for reproducible inputs.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    }

    static let seeds: [[UInt8]] = [
        Array("GET /a?b=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n".utf8),
        Array("POST /form HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n".utf8),
        Array("--B\r\nContent-Disposition: form-data; name=\"a\"; filename=\"f\"\r\n\r\nxyz\r\n--B--\r\n".utf8),
    ]

    private func mutate(_ seed: [UInt8], _ random: inout Random) -> [UInt8] {
        var bytes = seed
        for _ in 0..<(1 + random.below(8)) {
            switch random.below(4) {
            case 0 where !bytes.isEmpty: bytes[random.below(bytes.count)] = UInt8(random.below(256))
            case 1: bytes.insert(UInt8(random.below(256)), at: random.below(bytes.count + 1))
            case 2 where !bytes.isEmpty: bytes.remove(at: random.below(bytes.count))
            default: bytes += Array(String(repeating: "9", count: random.below(30)).utf8)
            }
        }
        return bytes
    }

    @Test func randomAndMutatedHeadsAndBodiesNeverTrap() throws {
        var random = Random(state: 0x5EED)
        var refused = 0
        var accepted = 0
        for round in 0..<3_000 {
            let seed = Self.seeds[round % Self.seeds.count]
            let input =
                round % 5 == 0 ? (0..<random.below(200)).map { _ in UInt8(random.below(256)) } : mutate(seed, &random)
            do {
                _ = try SandboxHTTPWire.parseHead(input[...])
                accepted += 1
            } catch is SandboxHTTPError {
                refused += 1
            }
            do {
                _ = try SandboxMultipartPart.parse(Data(input), boundary: "B")
            } catch is SandboxHTTPError {}
        }
        // Both outcomes happen: the inputs reach past the first check.
        #expect(refused > 100)
        #expect(accepted > 10)
    }
}
