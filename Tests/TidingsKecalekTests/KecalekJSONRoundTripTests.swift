import Foundation
import Testing

@testable import TidingsKecalek

/// A value parsed from the wire must encode to text that parses back to the same value, so a cached
/// or forwarded frame never changes meaning. FuzzKecalekFrame found integral doubles that came back as
/// integers; these inputs replay that class.
@Suite(.timeLimit(.minutes(1))) struct KecalekJSONRoundTripTests {
    static let numbers = [
        "5555555555555555.5e1", "5.555555555555555e16", "1e5", "1.5", "-0.0", "0.1", "1.5e300", "-2.5e-300",
        "55555555555555555555", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
        "123456789012345678901234567890.5", "4.9e-324", "55555555555555555.5", "5555555555555555.5",
        "555555555555555555.25", "9007199254740993.5",
    ]

    @Test(arguments: numbers)
    func numbersSurviveAnEncodeParseRoundTrip(_ text: String) throws {
        let parsed = try KecalekJSON.parse(Data("{\"n\": \(text)}".utf8))
        let again = try KecalekJSON.parse(parsed.encoded())
        #expect(again == parsed, "\(text) → \(String(decoding: parsed.encoded(), as: UTF8.self))")
    }

    @Test func integralNumbersReadAsIntegersWhateverTheirSpelling() throws {
        for text in ["42", "42.0", "4.2e1", "420e-1"] {
            #expect(try KecalekJSON.parse(Data(text.utf8)) == .int(42), "\(text)")
        }
    }
}
