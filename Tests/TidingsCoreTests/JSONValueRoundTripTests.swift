import Foundation
import Testing
import TidingsCore

/// A value parsed from the wire must encode to text that parses back to an equal value, so a cached
/// or forwarded frame never changes meaning. FuzzKecalekFrame found integral doubles that came back as
/// integers (`555555555555555555.25`); these inputs replay that class, and the Socket.IO fuzz fixtures
/// run through the same parser in SocketIOFuzzRegressionTests.
@Suite(.timeLimit(.minutes(1))) struct JSONValueRoundTripTests {
    static let numbers = [
        "5555555555555555.5e1", "5.555555555555555e16", "1e5", "1.5", "-0.0", "0.1", "1.5e300", "-2.5e-300",
        "55555555555555555555", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
        "123456789012345678901234567890.5", "4.9e-324", "55555555555555555.5", "5555555555555555.5",
        "555555555555555555.25", "9007199254740993.5", "-9223372036854775809", "-0",
    ]

    @Test(arguments: numbers)
    func numbersSurviveAnEncodeParseRoundTrip(_ text: String) throws {
        let parsed = try JSONValue(parsing: "{\"n\": \(text)}")
        for sorted in [false, true] {
            let again = try JSONValue(parsing: parsed.jsonData(sortedKeys: sorted))
            #expect(again == parsed, "\(text) → \(parsed.jsonString())")
        }
    }

    @Test func integralNumbersEqualIntegersWhateverTheirSpelling() throws {
        for text in ["42", "42.0", "4.2e1", "420e-1"] {
            let value = try JSONValue(parsing: text)
            #expect(value == .int(42), "\(text)")
            #expect(value.hashValue == JSONValue.int(42).hashValue, "\(text)")
            #expect(value.intValue == 42 && value.identifierValue == "42", "\(text)")
        }
        #expect(JSONValue.double(42.5) != .int(42))
        #expect(Set<JSONValue>([.int(1), .double(1), .double(1.5)]).count == 2)
    }

    @Test func wholeDoublesStayDoublesInText() throws {
        let value: JSONValue = [.double(100_000), .double(1e16), .double(-0.5), .int(100_000)]
        #expect(value.jsonString() == "[100000.0,1e+16,-0.5,100000]")
        guard case .array(let elements) = try JSONValue(parsing: value.jsonString()) else {
            Issue.record("not an array")
            return
        }
        guard case .double = elements[0], case .double = elements[1], case .int = elements[3] else {
            Issue.record("kinds changed: \(elements)")
            return
        }
    }

    @Test func integersBeyondInt64KeepTheirDigits() throws {
        let digits = ["9223372036854775808", "-9223372036854775809", "123456789012345678901234567890"]
        for text in digits {
            let value = try JSONValue(parsing: "[\(text)]")
            #expect(value == [.largeInteger(text)], "\(text)")
            #expect(value.jsonString() == "[\(text)]")
            #expect(value[0]?.identifierValue == text)
        }
        #expect(try JSONValue(parsing: "9223372036854775807") == .int(.max))
        #expect(try JSONValue(parsing: "-9223372036854775808") == .int(.min))
    }
}

extension JSONValue {
    fileprivate subscript(index: Int) -> JSONValue? { arrayValue?[index] }
}

@Suite(.timeLimit(.minutes(1))) struct JSONValueTextTests {
    @Test func roundTripsEveryKind() throws {
        let value: JSONValue = [
            "s": "quote \" backslash \\ tab \t nul \u{0} emoji 🎉", "i": -9_007_199_254_740_993, "d": 0.1,
            "e": 1e300, "b": false, "n": nil, "a": [[], [:], [1]],
        ]
        #expect(try JSONValue(parsing: value.jsonString()) == value)
    }

    @Test func sortedKeysEscapeAndOrderTheText() {
        let value: JSONValue = ["b": "line\n\"quote\"\u{01}", "a": [1, .double(2.5), true, nil]]
        #expect(value.jsonString(sortedKeys: true) == #"{"a":[1,2.5,true,null],"b":"line\n\"quote\"\u0001"}"#)
    }

    @Test func parsesSurrogatePairsAndReplacesLoneOnes() throws {
        #expect(try JSONValue(parsing: #""\ud83c\udf89""#) == "🎉")
        #expect(try JSONValue(parsing: #""\ud83c x""#) == "\u{FFFD} x")
        #expect(try JSONValue(parsing: #""\udf89""#) == "\u{FFFD}")
    }

    @Test func refusesWhatIsNotJSONWithTheOffset() {
        let cases: [(String, Int)] = [
            ("", 0), ("01", 1), ("1.", 2), ("-", 1), ("tru", 0), ("[1,]", 3), ("{\"a\"}", 4), ("\"\u{1}\"", 1),
            ("1e999", 5), ("[] []", 3), ("{1:2}", 1), ("nulL", 0),
        ]
        for (text, offset) in cases {
            #expect(throws: JSONParseError.self, "\(text)") { try JSONValue(parsing: text) }
            do {
                _ = try JSONValue(parsing: text)
            } catch {
                #expect(error.offset == offset, "\(text): \(error)")
            }
        }
    }

    @Test func nestingIsBoundedAndTheBoundIsConfigurable() throws {
        func nested(_ depth: Int) -> String {
            String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        }
        _ = try JSONValue(parsing: nested(JSONValue.maximumNestingDepth))
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: nested(JSONValue.maximumNestingDepth + 1)) }
        _ = try JSONValue(parsing: nested(3), maximumDepth: 3)
        do {
            _ = try JSONValue(parsing: "{\"a\":" + nested(3) + "}", maximumDepth: 3)
            Issue.record("depth 4 accepted with a bound of 3")
        } catch {
            #expect(error.reason == "nesting too deep" && error.offset == 7)
        }
        // A hostile depth fails with an error instead of exhausting the stack.
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: String(repeating: "[", count: 1_000_000)) }
    }
}

@Suite(.timeLimit(.minutes(1))) struct JSONValueCodableTests {
    struct Message: Codable, Equatable {
        var id: Int64
        var text: String
        var tags: [String]
        var score: Double?
    }

    @Test func codableMatchesTheTextForm() throws {
        let value: JSONValue = ["list": [1, 2.5, "x", nil, true], "big": .largeInteger("18446744073709551615")]
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(JSONValue.self, from: data) == value)
        #expect(try JSONValue(parsing: data) == value)
    }

    @Test func bridgesModelsBothWays() throws {
        let message = Message(id: 9_007_199_254_740_993, text: "hi \"you\"", tags: ["a"], score: 0.5)
        let value = try JSONValue(encoding: message)
        #expect(value == ["id": .int(9_007_199_254_740_993), "text": "hi \"you\"", "tags": ["a"], "score": 0.5])
        #expect(try value.decode(Message.self) == message)
        #expect(throws: DecodingError.self) { try JSONValue.object(["id": "x"]).decode(Message.self) }
    }
}
