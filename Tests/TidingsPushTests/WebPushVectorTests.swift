import Foundation
import Testing
import TidingsCore

@testable import TidingsPush

/// The published examples: RFC 8291 Appendix A (Web Push) and RFC 8188 §3.1–3.2 (the record layer).
@Suite(.timeLimit(.minutes(1))) struct WebPushVectorTests {
    @Test func rfc8291AppendixADecryptsWithTheUserAgentsKeys() throws {
        let vector = try #require(try PushFixtures.json("rfc-vectors.json")["rfc8291AppendixA"])
        let keys = try WebPushSubscriptionKeys(
            privateKey: PushFixtures.bytes(vector, "uaPrivate"), authSecret: PushFixtures.bytes(vector, "authSecret"))
        #expect(keys.publicKey == (try PushFixtures.bytes(vector, "uaPublic")))
        let plaintext = try WebPushDecryptor(keys: keys).decryptAES128GCM(PushFixtures.bytes(vector, "body"))
        #expect(plaintext == (try PushFixtures.bytes(vector, "plaintext")))
        #expect(String(decoding: plaintext, as: UTF8.self) == "When I grow up, I want to be a watermelon")
    }

    @Test func rfc8291AppendixAIsReproducedByteForByteByTheEncryptor() throws {
        let vector = try #require(try PushFixtures.json("rfc-vectors.json")["rfc8291AppendixA"])
        let sender = try TidingsCrypto.P256.KeyAgreement.PrivateKey(
            rawRepresentation: PushFixtures.bytes(vector, "asPrivate"))
        #expect(sender.publicKey.x963Representation == (try PushFixtures.bytes(vector, "asPublic")))
        let message = try WebPushEncryptor.encrypt(
            PushFixtures.bytes(vector, "plaintext"), receiverPublicKey: PushFixtures.bytes(vector, "uaPublic"),
            authSecret: PushFixtures.bytes(vector, "authSecret"), encoding: .aes128gcm, senderKey: sender,
            salt: PushFixtures.bytes(vector, "salt"))
        #expect(message.body == (try PushFixtures.bytes(vector, "body")))
        #expect(message.headers.map(\.name) == ["Content-Encoding"])
    }

    @Test(arguments: ["rfc8188Section3_1", "rfc8188Section3_2"])
    func rfc8188ExamplesDecrypt(_ name: String) throws {
        let vector = try #require(try PushFixtures.json("rfc-vectors.json")[name])
        let body = try PushFixtures.bytes(vector, "body")
        let opened = try RFC8188Content.open(
            body, inputKeyingMaterial: PushFixtures.bytes(vector, "inputKeyingMaterial"))
        #expect(String(decoding: opened.plaintext, as: UTF8.self) == (try PushFixtures.string(vector, "plaintext")))
        #expect(String(decoding: opened.keyID, as: UTF8.self) == (try PushFixtures.string(vector, "keyID")))
        let header = try AES128GCMHeader(body)
        #expect(header.recordSize == vector["recordSize"]?.intValue)
    }

    @Test func rfc8188Section3_1IsReproducedByteForByte() throws {
        let vector = try #require(try PushFixtures.json("rfc-vectors.json")["rfc8188Section3_1"])
        let body = try PushFixtures.bytes(vector, "body")
        let sealed = try RFC8188Content.seal(
            Array(try PushFixtures.string(vector, "plaintext").utf8),
            inputKeyingMaterial: PushFixtures.bytes(vector, "inputKeyingMaterial"), salt: Array(body[0..<16]),
            recordSize: 4096, keyID: [])
        #expect(sealed == body)
    }

    @Test func rfc8188MultipleRecordsFailWhenTheirOrderChanges() throws {
        // Each record's nonce carries its index: two records swapped no longer authenticate.
        let vector = try #require(try PushFixtures.json("rfc-vectors.json")["rfc8188Section3_2"])
        let body = try PushFixtures.bytes(vector, "body")
        let headerLength = 16 + 4 + 1 + 2
        let first = body[headerLength..<(headerLength + 25)]
        let second = body[(headerLength + 25)...]
        let swapped = Array(body[..<headerLength]) + second + first
        #expect(throws: WebPushError.authenticationFailure) {
            try RFC8188Content.open(swapped, inputKeyingMaterial: PushFixtures.bytes(vector, "inputKeyingMaterial"))
        }
    }
}
