import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsNet

@testable import TidingsPush

/// Payloads encrypted by the real Python libraries (http_ece, pywebpush) decrypt, and what Tidings encrypts
/// (as its sandbox server does) decrypts with http_ece — one peer process for the suite, many cases per request.
@Suite(.timeLimit(.minutes(3))) struct WebPushInteropTests {
    struct EncryptCase: Codable {
        var library: String
        var encoding: String
        var p256dh: String
        var auth: String
        var plaintext: String
        var rs: Int?
    }
    struct Encrypted: Codable {
        var body: String?
        var contentEncoding: String?
        var cryptoKey: String?
        var encryption: String?
        var noData: Bool?
    }
    struct DecryptCase: Codable {
        var privateKey: String
        var auth: String
        var encoding: String
        var body: String
        var cryptoKey: String?
        var encryption: String?
    }
    struct Decrypted: Codable {
        var plaintext: String?
        var error: String?
    }
    struct Batch<Case: Codable>: Codable { var cases: [Case] }
    struct Results<Result: Codable>: Codable { var results: [Result] }

    private func post<Case: Codable, Result: Codable>(_ path: String, _ cases: [Case], to peer: PythonPeer)
        async throws -> [Result]
    {
        let url = try #require(URL(string: "http://127.0.0.1:\(peer.port)\(path)"))
        var request = try HTTPRequest.json(.post, url: url, body: Batch(cases: cases))
        request.timeout = .seconds(120)
        let results = try await HTTPClient().decode(Results<Result>.self, from: request).results
        try #require(results.count == cases.count)
        return results
    }

    /// Sizes 0, 1, 3993 and random ones between, for every library and encoding.
    private func sizes(_ random: inout SplitMix64) -> [Int] {
        [0, 1, 3993] + (0..<30).map { _ in Int.random(in: 2...3992, using: &random) }
    }

    @Test func payloadsFromHttpEceAndPywebpushDecryptInBothEncodings() async throws {
        let peer = try await PythonPeer.shared("push_encrypt.py")
        var random = SplitMix64(seed: 8291)
        var cases: [EncryptCase] = []
        var keys: [WebPushSubscriptionKeys] = []
        var plaintexts: [[UInt8]] = []
        for library in ["http_ece", "pywebpush"] {
            for encoding in WebPushContentEncoding.allCases {
                for size in sizes(&random) {
                    let subscription = try freshKeys()
                    let plaintext = randomBytes(size, &random)
                    keys.append(subscription)
                    plaintexts.append(plaintext)
                    cases.append(
                        EncryptCase(
                            library: library, encoding: encoding.rawValue, p256dh: subscription.base64URLPublicKey,
                            auth: subscription.base64URLAuthSecret, plaintext: WebPushBase64URL.encode(plaintext)))
                }
            }
        }
        let results: [Encrypted] = try await post("/encrypt", cases, to: peer)
        var decrypted = 0
        for (index, result) in results.enumerated() {
            let label = "\(cases[index].library) \(cases[index].encoding) \(plaintexts[index].count) bytes"
            if result.noData == true {
                // pywebpush sends an empty payload as a push without a body: there is nothing to decrypt.
                #expect(cases[index].library == "pywebpush" && plaintexts[index].isEmpty, "\(label)")
                continue
            }
            let body = try WebPushBase64URL.decode(try #require(result.body))
            let plaintext = try WebPushDecryptor(keys: keys[index]).decrypt(
                body, contentEncoding: result.contentEncoding, cryptoKey: result.cryptoKey,
                encryption: result.encryption)
            #expect(plaintext == plaintexts[index], "\(label)")
            decrypted += 1
        }
        #expect(decrypted == cases.count - 2)
    }

    @Test func httpEceRecordsOfAnyValidSizeDecrypt() async throws {
        let peer = try await PythonPeer.shared("push_encrypt.py")
        var random = SplitMix64(seed: 8188)
        var cases: [EncryptCase] = []
        var keys: [WebPushSubscriptionKeys] = []
        var plaintexts: [[UInt8]] = []
        for encoding in WebPushContentEncoding.allCases {
            for _ in 0..<40 {
                let subscription = try freshKeys()
                let plaintext = randomBytes(Int.random(in: 0...3993, using: &random), &random)
                let recordSize = Int.random(in: (encoding == .aes128gcm ? 18 : 3)...600, using: &random)
                keys.append(subscription)
                plaintexts.append(plaintext)
                cases.append(
                    EncryptCase(
                        library: "http_ece", encoding: encoding.rawValue, p256dh: subscription.base64URLPublicKey,
                        auth: subscription.base64URLAuthSecret, plaintext: WebPushBase64URL.encode(plaintext),
                        rs: recordSize))
            }
        }
        let results: [Encrypted] = try await post("/encrypt", cases, to: peer)
        for (index, result) in results.enumerated() {
            let body = try WebPushBase64URL.decode(try #require(result.body))
            let plaintext = try WebPushDecryptor(keys: keys[index]).decrypt(
                body, contentEncoding: result.contentEncoding, cryptoKey: result.cryptoKey,
                encryption: result.encryption)
            #expect(plaintext == plaintexts[index], "\(cases[index].encoding) rs \(cases[index].rs ?? 0)")
        }
    }

    @Test func whatTidingsEncryptsDecryptsWithHttpEce() async throws {
        let peer = try await PythonPeer.shared("push_encrypt.py")
        var random = SplitMix64(seed: 2026)
        var cases: [DecryptCase] = []
        var plaintexts: [[UInt8]] = []
        for encoding in WebPushContentEncoding.allCases {
            for size in sizes(&random) {
                let subscription = try freshKeys()
                let plaintext = randomBytes(size, &random)
                // Mostly the single 4096-byte record a server sends; every fourth case several smaller records.
                let recordSize =
                    cases.count % 4 == 3
                    ? Int.random(in: (encoding == .aes128gcm ? 18 : 3)...500, using: &random) : 4096
                let message = try WebPushEncryptor.encrypt(
                    plaintext, receiverPublicKey: subscription.publicKey, authSecret: subscription.authSecret,
                    encoding: encoding, recordSize: recordSize)
                plaintexts.append(plaintext)
                cases.append(
                    DecryptCase(
                        privateKey: subscription.base64URLPrivateKey, auth: subscription.base64URLAuthSecret,
                        encoding: encoding.rawValue, body: WebPushBase64URL.encode(message.body),
                        cryptoKey: message.legacy?.cryptoKeyHeader, encryption: message.legacy?.encryptionHeader))
            }
        }
        let results: [Decrypted] = try await post("/decrypt", cases, to: peer)
        for (index, result) in results.enumerated() {
            #expect(result.error == nil, "\(cases[index].encoding) \(plaintexts[index].count) bytes")
            let plaintext = try WebPushBase64URL.decode(try #require(result.plaintext))
            #expect(plaintext == plaintexts[index], "\(cases[index].encoding) \(plaintexts[index].count) bytes")
        }
    }

    @Test func httpEceRefusesATamperedTidingsMessageToo() async throws {
        // The peer's decryption is not a rubber stamp: a flipped bit is refused there as here.
        let peer = try await PythonPeer.shared("push_encrypt.py")
        let subscription = try freshKeys()
        var body = try WebPushEncryptor.encrypt(
            Array("hello".utf8), receiverPublicKey: subscription.publicKey, authSecret: subscription.authSecret,
            encoding: .aes128gcm
        ).body
        body[body.count - 1] ^= 1
        let results: [Decrypted] = try await post(
            "/decrypt",
            [
                DecryptCase(
                    privateKey: subscription.base64URLPrivateKey, auth: subscription.base64URLAuthSecret,
                    encoding: "aes128gcm", body: WebPushBase64URL.encode(body))
            ], to: peer)
        #expect(results[0].plaintext == nil)
        #expect(results[0].error != nil)
    }
}
