import Foundation
import Testing

@testable import TidingsCore

@Suite(.timeLimit(.minutes(1))) struct ServerIDOrderingTests {
    @Test func ordersByLengthThenBytes() {
        #expect(ServerID("99") < ServerID("100"))
        #expect(ServerID("109999999999999999") < ServerID("110000000000000000"))
        #expect(!(ServerID("10") < ServerID("9")))
        #expect(!(ServerID("abc") < ServerID("abc")))
        #expect(ServerID("abc") < ServerID("abd"))
        #expect(ServerID("") < ServerID("0"))
        #expect(
            ["100", "99", "1000", "101", "9"].map { ServerID($0) }.sorted().map(\.rawValue)
                == ["9", "99", "100", "101", "1000"])
    }

    @Test func decodesStringsAndNumbersToTheSameID() throws {
        let decoder = JSONDecoder()
        let fromString = try decoder.decode([ServerID].self, from: Data(#"["109372890233021","7"]"#.utf8))
        let fromNumber = try decoder.decode([ServerID].self, from: Data(#"[109372890233021,7]"#.utf8))
        #expect(fromString == fromNumber)
        #expect(fromNumber.map(\.rawValue) == ["109372890233021", "7"])
        #expect(
            try decoder.decode(ServerID.self, from: Data("18446744073709551615".utf8)).rawValue
                == "18446744073709551615")
    }

    @Test func encodesAsString() throws {
        let data = try JSONEncoder().encode(["id": ServerID("42")])
        #expect(String(decoding: data, as: UTF8.self) == #"{"id":"42"}"#)
    }

    @Test(arguments: ["1.5", "true", "null", "{}", "[]", "-0.5"])
    func rejectsNonIdentifiersTyped(json: String) {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(ServerID.self, from: Data(json.utf8))
        }
    }
}
