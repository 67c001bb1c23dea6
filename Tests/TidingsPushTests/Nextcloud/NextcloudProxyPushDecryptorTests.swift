import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsPush

@Suite(.timeLimit(.minutes(1))) struct NextcloudProxyPushDecryptorTests {
    /// Keys shared by the suite: 2048-bit generation is the slow part.
    static let keys: (device: TidingsCrypto.RSA.PrivateKey, user: TidingsCrypto.RSA.PrivateKey)? = {
        guard let device = try? TidingsCrypto.RSA.PrivateKey(), let user = try? TidingsCrypto.RSA.PrivateKey()
        else { return nil }
        return (device, user)
    }()

    /// What a Nextcloud server does: encrypt with the device key, sign the encrypted bytes with the user key.
    static func push(
        _ json: String, padding: TidingsCrypto.RSA.Padding = .pkcs1v15, signer: TidingsCrypto.RSA.PrivateKey? = nil
    ) throws -> (subject: String, signature: String) {
        let keys = try #require(Self.keys)
        let block = try keys.device.publicKey.encrypt(Array(json.utf8), padding: padding)
        let signature = try (signer ?? keys.user).signatureSHA512PKCS1(for: block)
        return (Data(block).base64EncodedString(), Data(signature).base64EncodedString())
    }

    static func decryptor() throws -> NextcloudProxyPushDecryptor {
        let keys = try #require(Self.keys)
        return NextcloudProxyPushDecryptor(deviceKey: keys.device, userPublicKey: keys.user.publicKey)
    }

    @Test(arguments: [TidingsCrypto.RSA.Padding.pkcs1v15, .oaepSHA1])
    func opensTheFourShapesOfThePushV2Protocol(padding: TidingsCrypto.RSA.Padding) throws {
        let decryptor = try Self.decryptor()
        let cases: [(String, NextcloudProxySubject)] = [
            (
                #"{"app":"social","subject":"Ada mentioned you","type":"mention","id":"t0k3n","nid":1337}"#,
                .notification(nid: 1337, app: "social", subject: "Ada mentioned you", type: "mention", id: "t0k3n")
            ),
            (#"{"delete":true,"nid":1337}"#, .delete(nid: 1337)),
            (#"{"delete-multiple":true,"nids":[1,2,3]}"#, .deleteMultiple(nids: [1, 2, 3])),
            (#"{"delete-all":true}"#, .deleteAll),
        ]
        for (json, expected) in cases {
            let push = try Self.push(json, padding: padding)
            #expect(try decryptor.open(subject: push.subject, signature: push.signature) == expected)
        }
        let push = try Self.push(#"{"delete":true,"nid":7}"#, padding: padding)
        let envelope = #"{"subject":"\#(push.subject)","signature":"\#(push.signature)"}"#
        #expect(try decryptor.open(messageJSON: Array(envelope.utf8)) == .delete(nid: 7))
    }

    @Test func refusesAnyPushNotSignedByTheAccountBeforeDecrypting() throws {
        let decryptor = try Self.decryptor()
        let keys = try #require(Self.keys)
        // Signed by the device key instead of the account's: a valid block, a wrong signer.
        let forged = try Self.push(#"{"delete-all":true}"#, signer: keys.device)
        #expect(throws: NextcloudPushError.invalidSignature) {
            try decryptor.open(subject: forged.subject, signature: forged.signature)
        }
        // The right signature over other bytes (another encryption of the same subject).
        let first = try Self.push(#"{"delete-all":true}"#)
        let second = try Self.push(#"{"delete-all":true}"#)
        #expect(throws: NextcloudPushError.invalidSignature) {
            try decryptor.open(subject: second.subject, signature: first.signature)
        }
        #expect(throws: NextcloudPushError.malformedMessage) {
            try decryptor.open(subject: "not base64!", signature: first.signature)
        }
        #expect(throws: NextcloudPushError.malformedMessage) { try decryptor.open(messageJSON: Array("{}".utf8)) }
    }

    @Test func signedGarbageIsATypedErrorNotACrash() throws {
        let decryptor = try Self.decryptor()
        for json in [#"{"nid":-1,"app":"a","subject":"s"}"#, #"[1]"#, #"{"delete":true}"#, #"{"nid":1}"#, "x"] {
            let push = try Self.push(json)
            #expect(throws: NextcloudPushError.malformedSubject) {
                try decryptor.open(subject: push.subject, signature: push.signature)
            }
        }
        // A block signed correctly but encrypted to another device: v1.5 implicit rejection yields noise.
        let keys = try #require(Self.keys)
        let other = try TidingsCrypto.RSA.PrivateKey()
        let block = try other.publicKey.encrypt(Array(#"{"delete-all":true}"#.utf8), padding: .pkcs1v15)
        let signature = try keys.user.signatureSHA512PKCS1(for: block)
        #expect(throws: NextcloudPushError.self) {
            try decryptor.open(
                subject: Data(block).base64EncodedString(), signature: Data(signature).base64EncodedString())
        }
    }

    /// 3,000 randomized subjects: random bytes, truncations and mutations of valid subjects. Each one
    /// either parses to one of the four shapes or throws `malformedSubject`; none traps.
    @Test func randomizedSubjectsNeverCrashTheParser() {
        var generator = SplitMix64(seed: 0x4E43_5055_5348)
        let seeds = [
            #"{"app":"social","subject":"s","type":"t","id":"1","nid":1}"#, #"{"delete":true,"nid":2}"#,
            #"{"delete-multiple":true,"nids":[1,2]}"#, #"{"delete-all":true}"#,
        ].map { Array($0.utf8) }
        var parsed = 0
        for index in 0..<3_000 {
            var bytes: [UInt8]
            switch index % 3 {
            case 0:
                bytes = (0..<Int.random(in: 0...64, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
            case 1:
                let seed = seeds[index % seeds.count]
                bytes = Array(seed.prefix(Int.random(in: 0...seed.count, using: &generator)))
            default:
                bytes = seeds[index % seeds.count]
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(
                        in: 0...255, using: &generator)
                }
            }
            do {
                _ = try NextcloudProxySubject(decryptedJSON: bytes)
                parsed += 1
            } catch {
                #expect(error == .malformedSubject)
            }
        }
        // Some mutations keep a valid shape (a changed digit or letter), so both paths ran.
        #expect(parsed > 0 && parsed < 3_000)
    }
}
