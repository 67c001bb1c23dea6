import PeerSupport
import Testing
import TidingsCore

@testable import TidingsPush

/// The encryptor and the decryptor agree for every size and record size, in both encodings (the interop
/// tests prove each against Python's http_ece and pywebpush).
@Suite(.timeLimit(.minutes(1))) struct WebPushRoundTripTests {
    @Test(arguments: WebPushContentEncoding.allCases)
    func everySizeUpTo3993RoundTripsInOneRecord(_ encoding: WebPushContentEncoding) throws {
        let keys = try freshKeys()
        let decryptor = WebPushDecryptor(keys: keys)
        var random = SplitMix64(seed: encoding == .aes128gcm ? 1 : 2)
        for size in [0, 1, 2, 15, 16, 17, 100, 1000, 3992, 3993] {
            let plaintext = randomBytes(size, &random)
            let message = try WebPushEncryptor.encrypt(
                plaintext, receiverPublicKey: keys.publicKey, authSecret: keys.authSecret, encoding: encoding)
            #expect(try decryptor.decrypt(message.body, encoding: encoding, legacy: message.legacy) == plaintext)
        }
        // 3993 bytes is what fits the 4096-byte message RFC 8291 allows.
        let largest = try WebPushEncryptor.encrypt(
            [UInt8](repeating: 1, count: 3993), receiverPublicKey: keys.publicKey, authSecret: keys.authSecret,
            encoding: .aes128gcm)
        #expect(largest.body.count == 4096)
    }

    @Test(arguments: WebPushContentEncoding.allCases)
    func manyRecordsOfAnyValidSizeRoundTrip(_ encoding: WebPushContentEncoding) throws {
        let keys = try freshKeys()
        let decryptor = WebPushDecryptor(keys: keys)
        var random = SplitMix64(seed: encoding == .aes128gcm ? 3 : 4)
        let smallest = encoding == .aes128gcm ? 18 : 3
        for _ in 0..<60 {
            let recordSize = Int.random(in: smallest...300, using: &random)
            let plaintext = randomBytes(Int.random(in: 0...2000, using: &random), &random)
            let message = try WebPushEncryptor.encrypt(
                plaintext, receiverPublicKey: keys.publicKey, authSecret: keys.authSecret, encoding: encoding,
                recordSize: recordSize)
            #expect(
                try decryptor.decrypt(message.body, encoding: encoding, legacy: message.legacy) == plaintext,
                "record size \(recordSize), \(plaintext.count) bytes")
        }
    }

    @Test func exactMultiplesOfTheRecordSizeRoundTrip() throws {
        let keys = try freshKeys()
        let decryptor = WebPushDecryptor(keys: keys)
        for encoding in WebPushContentEncoding.allCases {
            let recordSize = 40
            let perRecord = encoding == .aes128gcm ? recordSize - 17 : recordSize - 2
            for records in 1...3 {
                let plaintext = [UInt8](repeating: 9, count: perRecord * records)
                let message = try WebPushEncryptor.encrypt(
                    plaintext, receiverPublicKey: keys.publicKey, authSecret: keys.authSecret, encoding: encoding,
                    recordSize: recordSize)
                #expect(try decryptor.decrypt(message.body, encoding: encoding, legacy: message.legacy) == plaintext)
            }
        }
    }

    @Test func theHTTPFormDecryptsFromItsHeaders() throws {
        let keys = try freshKeys()
        for encoding in WebPushContentEncoding.allCases {
            let message = try WebPushEncryptor.encrypt(
                Array("{\"title\":\"hi\"}".utf8), receiverPublicKey: keys.publicKey, authSecret: keys.authSecret,
                encoding: encoding, recordSize: 100)
            let headers = Dictionary(uniqueKeysWithValues: message.headers.map { ($0.name, $0.value) })
            let plaintext = try WebPushDecryptor(keys: keys).decrypt(
                message.body, contentEncoding: headers["Content-Encoding"], cryptoKey: headers["Crypto-Key"],
                encryption: headers["Encryption"])
            #expect(plaintext == Array("{\"title\":\"hi\"}".utf8))
        }
    }

    @Test func anEncryptorRefusesBadInputWithTypedErrors() throws {
        let keys = try freshKeys()
        #expect(throws: WebPushError.invalidKey) {
            try WebPushEncryptor.encrypt([], receiverPublicKey: [4, 1], authSecret: keys.authSecret, encoding: .aesgcm)
        }
        #expect(throws: WebPushError.invalidKey) {
            try WebPushEncryptor.encrypt([], receiverPublicKey: keys.publicKey, authSecret: [1], encoding: .aesgcm)
        }
        #expect(throws: WebPushError.invalidRecordSize) {
            try WebPushEncryptor.encrypt(
                [], receiverPublicKey: keys.publicKey, authSecret: keys.authSecret, encoding: .aes128gcm, recordSize: 17
            )
        }
        #expect(throws: WebPushError.invalidRecordSize) {
            try WebPushEncryptor.encrypt(
                [], receiverPublicKey: keys.publicKey, authSecret: keys.authSecret, encoding: .aesgcm, recordSize: 2)
        }
        #expect(throws: WebPushError.invalidParameter) {
            try WebPushEncryptor.encrypt(
                [], receiverPublicKey: keys.publicKey, authSecret: keys.authSecret, encoding: .aesgcm, salt: [1])
        }
    }
}
