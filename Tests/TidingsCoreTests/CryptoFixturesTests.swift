import Foundation
import Testing

/// Reads the published test vectors copied into Tests/Fixtures/crypto/ (each file names its source).
enum CryptoFixtures {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/crypto")

    static func json(_ name: String) throws -> [String: Any] {
        let data = try Data(contentsOf: directory.appendingPathComponent(name))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func vectors(_ name: String) throws -> [[String: String]] {
        try #require(try json(name)["vectors"] as? [[String: String]])
    }
}

/// Decodes lowercase or uppercase hex; the fixtures are trusted, so bad hex fails the test.
func hex(_ text: String) throws -> [UInt8] {
    let digits = Array(text.utf8)
    try #require(digits.count % 2 == 0, "odd hex length")
    var bytes: [UInt8] = []
    bytes.reserveCapacity(digits.count / 2)
    var index = 0
    while index < digits.count {
        let byte = try #require(UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16))
        bytes.append(byte)
        index += 2
    }
    return bytes
}

func hexString(_ bytes: [UInt8]) -> String {
    bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
}

@Suite(.timeLimit(.minutes(1))) struct CryptoFixturesTests {
    @Test func everyFixtureNamesItsSource() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: CryptoFixtures.directory.path)
            .filter { $0.hasSuffix(".json") }
        #expect(!names.isEmpty)
        for name in names {
            let source = try CryptoFixtures.json(name)["source"] as? String
            #expect(source?.isEmpty == false, "\(name) lacks a source line")
        }
    }

    @Test func hexRoundTrips() throws {
        #expect(try hex("00ff10Ab") == [0x00, 0xFF, 0x10, 0xAB])
        #expect(hexString([0x00, 0xFF, 0x10, 0xAB]) == "00ff10ab")
    }
}
