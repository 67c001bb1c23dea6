import Foundation
import PeerSupport
import Testing

@testable import TidingsCore

@Suite(.timeLimit(.minutes(1))) struct ServerIDPropertyTests {
    /// Random decimal Snowflake-like IDs of 1 to 20 digits, no leading zero.
    static func randomDecimalIDs(count: Int, seed: UInt64) -> [String] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            let length = Int.random(in: 1...20, using: &generator)
            var digits = String(Int.random(in: 1...9, using: &generator))
            for _ in 1..<length { digits += String(Int.random(in: 0...9, using: &generator)) }
            return digits
        }
    }

    /// Random strings over a mixed alphabet (letters, digits, punctuation, multi-byte characters).
    static func randomStrings(count: Int, seed: UInt64) -> [String] {
        var generator = SplitMix64(seed: seed)
        let alphabet: [Character] = Array("09aZ_-.é€😀") + ["e\u{301}"]
        return (0..<count).map { _ in
            String(
                (0..<Int.random(in: 0...6, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func orderIsAStrictTotalOrder(seed: UInt64) {
        let ids = (Self.randomStrings(count: 60, seed: seed) + Self.randomDecimalIDs(count: 60, seed: seed))
            .map { ServerID($0) }
        for a in ids {
            #expect(!(a < a), "irreflexive")
            for b in ids {
                // Trichotomy: exactly one of a < b, a == b, b < a.
                let relations = [a < b, a == b, b < a].filter { $0 }.count
                #expect(relations == 1, "\(a) vs \(b)")
                if a < b { #expect(!(b < a), "asymmetric") }
            }
        }
        // Transitivity, checked on sorted triples.
        let sorted = ids.sorted()
        for index in sorted.indices.dropLast(2) {
            let (a, b, c) = (sorted[index], sorted[index + 1], sorted[index + 2])
            #expect(a <= b && b <= c && a <= c)
        }
    }

    @Test(arguments: [4, 5, 6] as [UInt64])
    func decimalOrderMatchesNumericOrder(seed: UInt64) {
        // Reference order by (digit count, digits): decimal numbers without leading zeros compare
        // numerically that way, at any size, without ever converting to an integer.
        let ids = Self.randomDecimalIDs(count: 400, seed: seed)
        let byServerID = ids.map { ServerID($0) }.sorted().map(\.rawValue)
        let numeric = ids.sorted { lhs, rhs in
            lhs.count != rhs.count ? lhs.count < rhs.count : lhs.lexicographicallyPrecedes(rhs)
        }
        #expect(byServerID == numeric)
        // Cross-check the values that fit in UInt64 against real integer order.
        let small = ids.filter { $0.count <= 19 }
        #expect(small.map { ServerID($0) }.sorted().map(\.rawValue) == small.sorted { UInt64($0)! < UInt64($1)! })
    }

    @Test(arguments: [7, 8] as [UInt64])
    func jsonNumberAndStringDecodeToTheSameID(seed: UInt64) throws {
        let ids = Self.randomDecimalIDs(count: 200, seed: seed).filter { UInt64($0) != nil }
        #expect(ids.count > 150)
        let asNumbers = "[" + ids.joined(separator: ",") + "]"
        let asStrings = "[" + ids.map { "\"\($0)\"" }.joined(separator: ",") + "]"
        let decoder = JSONDecoder()
        let fromNumbers = try decoder.decode([ServerID].self, from: Data(asNumbers.utf8))
        let fromStrings = try decoder.decode([ServerID].self, from: Data(asStrings.utf8))
        #expect(fromNumbers == fromStrings)
        #expect(fromNumbers.map(\.rawValue) == ids)
        // Encoding always produces strings, and decodes back to equal IDs.
        let reencoded = try decoder.decode([ServerID].self, from: JSONEncoder().encode(fromNumbers))
        #expect(reencoded == fromNumbers)
    }

    @Test func canonicallyEquivalentSpellingsStayDistinctAndOrdered() {
        let composed = ServerID("caf\u{E9}")
        let decomposed = ServerID("cafe\u{301}")
        #expect(composed.rawValue == decomposed.rawValue, "Swift strings call them equal")
        #expect(composed != decomposed)
        #expect((composed < decomposed) != (decomposed < composed))
        #expect(Set([composed, decomposed]).count == 2)
    }

    @Test func hashingAgreesWithEquality() {
        let ids = Self.randomDecimalIDs(count: 300, seed: 9).map { ServerID($0) }
        #expect(Set(ids).count == Set(ids.map(\.rawValue)).count)
    }
}
