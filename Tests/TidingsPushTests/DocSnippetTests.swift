import Testing

@testable import TidingsPush

/// The code of Sources/TidingsPush/Documentation.docc/TidingsPush.md, run as written.
@Suite(.timeLimit(.minutes(1))) struct PushDocSnippetTests {
    @Test func theLandingPageSnippetDecryptsAPush() throws {
        // What a server sends (the snippet's `body` and `headers`).
        let keys = try WebPushSubscriptionKeys.generate()
        let sent = try WebPushEncryptor.encrypt(
            Array("{\"title\":\"hi\"}".utf8), receiverPublicKey: keys.publicKey, authSecret: keys.authSecret,
            encoding: .aesgcm)
        let body = sent.body
        let headers = Dictionary(uniqueKeysWithValues: sent.headers.map { ($0.name, $0.value) })

        let plaintext = try WebPushDecryptor(keys: keys).decrypt(
            body, contentEncoding: headers["Content-Encoding"], cryptoKey: headers["Crypto-Key"],
            encryption: headers["Encryption"])
        #expect(plaintext == Array("{\"title\":\"hi\"}".utf8))
    }
}
