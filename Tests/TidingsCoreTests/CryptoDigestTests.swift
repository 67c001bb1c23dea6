import Foundation
import Testing

@testable import TidingsCore

@Suite(.timeLimit(.minutes(1))) struct CryptoDigestTests {
    @Test func matchesFIPS180Vectors() throws {
        let vectors = try CryptoFixtures.vectors("sha.json")
        #expect(vectors.count == 3)
        for vector in vectors {
            let message = Array((vector["message"] ?? "").utf8)
            #expect(hexString(TidingsCrypto.Insecure.SHA1.hash(message)) == vector["sha1"])
            #expect(hexString(TidingsCrypto.SHA256.hash(message)) == vector["sha256"])
            #expect(hexString(TidingsCrypto.SHA512.hash(message)) == vector["sha512"])
        }
    }

    @Test func sha1GivesTheWebSocketAcceptValueOfRFC6455() throws {
        let example = try #require(try CryptoFixtures.json("sha.json")["websocket"] as? [String: String])
        let key = try #require(example["key"])
        let digest = TidingsCrypto.Insecure.SHA1.hash(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))
        #expect(Data(digest).base64EncodedString() == example["accept"])
    }

    @Test func longInputsHashAndDiffer() {
        let big = [UInt8](repeating: 0x61, count: 1_000_000)
        #expect(
            hexString(TidingsCrypto.SHA256.hash(big))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        var other = big
        other[999_999] = 0x62
        #expect(TidingsCrypto.SHA512.hash(big) != TidingsCrypto.SHA512.hash(other))
    }
}
