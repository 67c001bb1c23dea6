import Foundation
import PeerSupport
import Testing
import TidingsCore

@testable import TidingsPush

@Suite(.timeLimit(.minutes(1))) struct WebPushKeysTests {
    @Test func generatedKeysAreFreshAndSurviveTheirBase64URLForm() throws {
        let keys = try WebPushSubscriptionKeys.generate()
        #expect(keys.publicKey.count == 65 && keys.publicKey.first == 0x04)
        #expect(keys.authSecret.count == 16)
        let restored = try WebPushSubscriptionKeys(
            base64URLPrivateKey: keys.base64URLPrivateKey, base64URLAuthSecret: keys.base64URLAuthSecret)
        #expect(restored.publicKey == keys.publicKey)
        #expect(restored.authSecret == keys.authSecret)
        #expect(restored.base64URLPublicKey == keys.base64URLPublicKey)
        // Base64url without padding: 65 bytes → 87 characters, 32 → 43, 16 → 22.
        #expect(keys.base64URLPublicKey.count == 87)
        #expect(keys.base64URLPrivateKey.count == 43)
        #expect(keys.base64URLAuthSecret.count == 22)
        let other = try WebPushSubscriptionKeys.generate()
        #expect(other.publicKey != keys.publicKey)
        #expect(other.authSecret != keys.authSecret)
    }

    @Test func keysDecryptWhatWasEncryptedForThemAfterARoundTrip() throws {
        let keys = try WebPushSubscriptionKeys.generate()
        let message = try WebPushEncryptor.encrypt(
            Array("hello".utf8), receiverPublicKey: keys.publicKey, authSecret: keys.authSecret, encoding: .aes128gcm)
        let restored = try WebPushSubscriptionKeys(
            base64URLPrivateKey: keys.base64URLPrivateKey, base64URLAuthSecret: keys.base64URLAuthSecret)
        #expect(try WebPushDecryptor(keys: restored).decryptAES128GCM(message.body) == Array("hello".utf8))
    }

    @Test func printingKeysShowsThePublicKeyOnly() throws {
        let keys = try WebPushSubscriptionKeys.generate()
        var dumped = ""
        dump(keys, to: &dumped)
        for text in [keys.description, "\(keys)", String(reflecting: keys), dumped] {
            #expect(text.contains(keys.base64URLPublicKey))
            #expect(!text.contains(keys.base64URLPrivateKey))
            #expect(!text.contains(keys.base64URLAuthSecret))
        }
    }

    @Test func badKeyMaterialIsRefusedWithATypedError() {
        let auth = [UInt8](repeating: 1, count: 16)
        #expect(throws: WebPushError.invalidKey) {
            try WebPushSubscriptionKeys(privateKey: [1, 2, 3], authSecret: auth)
        }
        #expect(throws: WebPushError.invalidKey) {
            try WebPushSubscriptionKeys(privateKey: [UInt8](repeating: 0, count: 32), authSecret: auth)
        }
        #expect(throws: WebPushError.invalidKey) {
            try WebPushSubscriptionKeys(privateKey: [UInt8](repeating: 0xFF, count: 32), authSecret: auth)
        }
        #expect(throws: WebPushError.invalidKey) {
            try WebPushSubscriptionKeys(privateKey: [UInt8](repeating: 1, count: 32), authSecret: [1])
        }
        #expect(throws: WebPushError.invalidParameter) {
            try WebPushSubscriptionKeys(base64URLPrivateKey: "a b", base64URLAuthSecret: "AAAAAAAAAAAAAAAAAAAAAA")
        }
    }

    @Test func base64URLDecodesWithOrWithoutPaddingAndRefusesTheRest() throws {
        var random = SplitMix64(seed: 12)
        for count in 0..<40 {
            let bytes = randomBytes(count, &random)
            let text = WebPushBase64URL.encode(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(try WebPushBase64URL.decode(text) == bytes)
            let padded = text + String(repeating: "=", count: (4 - text.count % 4) % 4)
            #expect(try WebPushBase64URL.decode(padded) == bytes)
        }
        #expect(try WebPushBase64URL.decode("-_8") == [0xFB, 0xFF])
        for bad in ["a", "ab+c", "ab/c", "ab c", "ab\n", "a===", "ab=c", "abc==", "ab===", "é", "-_9", "AB"] {
            #expect(throws: WebPushError.invalidParameter, "\(bad)") { try WebPushBase64URL.decode(bad) }
        }
    }
}
