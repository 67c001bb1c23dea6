import Testing
import TidingsCore

@testable import TidingsPush

/// The negative corpus: every malformed message is refused with its own kind of error, never a crash and never
/// a plaintext.
@Suite(.timeLimit(.minutes(1))) struct WebPushNegativeTests {
    let keys: WebPushSubscriptionKeys
    let decryptor: WebPushDecryptor
    let crafted: CraftedMessages

    init() throws {
        keys = try freshKeys()
        decryptor = WebPushDecryptor(keys: keys)
        crafted = try CraftedMessages(keys: keys)
    }

    private func valid(_ size: Int = 100, encoding: WebPushContentEncoding = .aes128gcm, recordSize: Int = 4096)
        throws -> WebPushEncryptedMessage
    {
        try WebPushEncryptor.encrypt(
            [UInt8](repeating: 0x61, count: size), receiverPublicKey: keys.publicKey, authSecret: keys.authSecret,
            encoding: encoding, recordSize: recordSize)
    }

    // MARK: aes128gcm header

    @Test func anEmptyBodyIsRefused() {
        #expect(throws: WebPushError.emptyBody) { try decryptor.decryptAES128GCM([]) }
        #expect(throws: WebPushError.emptyBody) {
            try decryptor.decrypt([], contentEncoding: "aes128gcm", cryptoKey: nil, encryption: nil)
        }
        #expect(throws: WebPushError.emptyBody) {
            try decryptor.decrypt(
                [], contentEncoding: "aesgcm", cryptoKey: "dh=\(keys.base64URLPublicKey)",
                encryption: "salt=AAAAAAAAAAAAAAAAAAAAAA")
        }
    }

    @Test func everyTruncationInsideTheHeaderIsATruncatedHeader() throws {
        let body = try valid().body
        // 86 = salt 16 + rs 4 + idlen 1 + key id 65: any shorter prefix ends inside the header.
        for length in 1..<86 {
            #expect(throws: WebPushError.truncatedHeader, "prefix of \(length) bytes") {
                try decryptor.decryptAES128GCM(Array(body.prefix(length)))
            }
        }
    }

    @Test(arguments: [0, 1, 17])
    func aRecordSizeBelow18IsRefused(_ recordSize: Int) throws {
        var body = try valid().body
        body.replaceSubrange(16..<20, with: [0, 0, 0, UInt8(recordSize)])
        #expect(throws: WebPushError.invalidRecordSize) { try decryptor.decryptAES128GCM(body) }
    }

    @Test func aWrongRecordSizeBreaksTheRecordsApart() throws {
        // Declaring 50 for a 117-byte record cuts it into three: the first no longer authenticates.
        var body = try valid().body
        body.replaceSubrange(16..<20, with: [0, 0, 0, 50])
        #expect(throws: WebPushError.authenticationFailure) { try decryptor.decryptAES128GCM(body) }
    }

    @Test func aKeyIDThatIsNotTheSendersPointIsRefused() throws {
        let body = try valid().body
        var shortID = Array(body[0..<20]) + [64] + body[21..<85] + body[86...]
        #expect(throws: WebPushError.invalidKeyID) { try decryptor.decryptAES128GCM(shortID) }
        shortID = Array(body[0..<20]) + [0] + body[86...]
        #expect(throws: WebPushError.invalidKeyID) { try decryptor.decryptAES128GCM(shortID) }
        var offCurve = body
        offCurve[60] ^= 0x01
        #expect(throws: WebPushError.invalidKeyID) { try decryptor.decryptAES128GCM(offCurve) }
        var compressed = body
        compressed[21] = 0x02
        #expect(throws: WebPushError.invalidKeyID) { try decryptor.decryptAES128GCM(compressed) }
    }

    // MARK: aes128gcm records

    @Test func aRecordTooShortForItsTagIsATruncatedRecord() throws {
        let body = try valid().body
        for cut in [1, 16] {
            #expect(throws: WebPushError.truncatedRecord) {
                try decryptor.decryptAES128GCM(Array(body.prefix(86 + cut)))
            }
        }
        // Longer cuts keep a tag's worth of bytes but not the tag: the tag check fails.
        #expect(throws: WebPushError.authenticationFailure) {
            try decryptor.decryptAES128GCM(Array(body.prefix(86 + 40)))
        }
    }

    @Test func aMessageWithoutItsLastRecordIsTruncated() throws {
        // Three records of 30 bytes (13 bytes of plaintext each); dropping the last leaves a 0x01 at the end.
        let body = try valid(30, recordSize: 30).body
        #expect(body.count == 86 + 30 + 30 + 21)
        #expect(try decryptor.decryptAES128GCM(body) == [UInt8](repeating: 0x61, count: 30))
        #expect(throws: WebPushError.truncatedRecord) { try decryptor.decryptAES128GCM(Array(body.prefix(86 + 60))) }
    }

    @Test func wrongDelimitersAreRefused() throws {
        // The last record marked 0x01 is a truncation; any other value is a bad delimiter.
        let cases: [(records: [[UInt8]], error: WebPushError)] = [
            ([Array("hi".utf8) + [1]], .truncatedRecord),
            ([Array("hi".utf8) + [3]], .badDelimiter),
            ([Array("hi".utf8) + [3, 0, 0]], .badDelimiter),
            ([[0, 0, 0]], .badDelimiter),
            // An empty record plaintext is just a tag: too short to be a record.
            ([[]], .truncatedRecord),
            // A record before the last must end in 0x01, not 0x02 and not nothing.
            ([[0x61, 2, 0], [0x62, 2]], .badDelimiter),
            ([[0x61, 0, 0], [0x62, 2]], .badDelimiter),
        ]
        for (records, error) in cases {
            // Records before the last fill the record size (19); a single record gets room to spare.
            let body = try crafted.aes128gcm(records: records, recordSize: records.count == 1 ? 4096 : 19)
            #expect(throws: error, "\(records)") { try decryptor.decryptAES128GCM(body) }
        }
    }

    @Test func validFramingWithPaddingDecrypts() throws {
        let body = try crafted.aes128gcm(records: [[0x61, 1, 0, 0], [0x62, 0x63, 2, 0]], recordSize: 4 + 16)
        #expect(try decryptor.decryptAES128GCM(body) == [0x61, 0x62, 0x63])
    }

    @Test func aTamperedTagOrCiphertextFailsAuthentication() throws {
        let body = try valid().body
        for position in [86, 100, body.count - 16, body.count - 1] {
            var tampered = body
            tampered[position] ^= 0x80
            #expect(throws: WebPushError.authenticationFailure, "byte \(position)") {
                try decryptor.decryptAES128GCM(tampered)
            }
        }
        // The salt feeds the key schedule: changing it changes the key.
        var salted = body
        salted[0] ^= 1
        #expect(throws: WebPushError.authenticationFailure) { try decryptor.decryptAES128GCM(salted) }
    }

    @Test func anotherSubscriptionsKeysFailAuthentication() throws {
        let body = try valid().body
        let other = WebPushDecryptor(keys: try freshKeys())
        #expect(throws: WebPushError.authenticationFailure) { try other.decryptAES128GCM(body) }
        let otherAuth = WebPushDecryptor(
            keys: try WebPushSubscriptionKeys(
                privateKey: keys.privateKey.rawRepresentation, authSecret: [UInt8](repeating: 7, count: 16)))
        #expect(throws: WebPushError.authenticationFailure) { try otherAuth.decryptAES128GCM(body) }
    }

    @Test func aBodyPastTheLimitIsRefusedBeforeAnyWork() throws {
        let huge = [UInt8](repeating: 0, count: WebPushDecryptor.maximumBodyByteCount + 1)
        #expect(throws: WebPushError.tooLarge) { try decryptor.decryptAES128GCM(huge) }
        let parameters = try WebPushLegacyParameters(
            senderPublicKey: keys.publicKey, salt: [UInt8](repeating: 0, count: 16))
        #expect(throws: WebPushError.tooLarge) { try decryptor.decryptAESGCM(huge, parameters: parameters) }
    }

    // MARK: aesgcm

    @Test func aesgcmPaddingIsChecked() throws {
        let cases: [(records: [[UInt8]], error: WebPushError?)] = [
            ([[0, 0] + Array("hi".utf8)], nil),
            ([[0, 2, 0, 0] + Array("hi".utf8)], nil),
            ([[0, 3, 0, 0]], .badPadding),
            ([[0xFF, 0xFF, 0, 0]], .badPadding),
            ([[0, 2, 0, 1] + Array("hi".utf8)], .badPadding),
            ([[0]], .truncatedRecord),
        ]
        for (records, error) in cases {
            let (body, parameters) = try crafted.aesgcm(records: records)
            if let error {
                #expect(throws: error, "\(records)") { try decryptor.decryptAESGCM(body, parameters: parameters) }
            } else {
                #expect(try decryptor.decryptAESGCM(body, parameters: parameters) == Array("hi".utf8))
            }
        }
    }

    @Test func anAesgcmMessageEndingOnARecordBoundaryIsTruncated() throws {
        // Record size 10: 8 bytes of plaintext fill a record exactly, so a padding-only record follows it.
        let message = try valid(8, encoding: .aesgcm, recordSize: 10)
        let legacy = try #require(message.legacy)
        #expect(message.body.count == 26 + 18)
        #expect(try decryptor.decryptAESGCM(message.body, parameters: legacy) == [UInt8](repeating: 0x61, count: 8))
        #expect(throws: WebPushError.truncatedRecord) {
            try decryptor.decryptAESGCM(Array(message.body.prefix(26)), parameters: legacy)
        }
        #expect(throws: WebPushError.truncatedRecord) {
            try decryptor.decryptAESGCM(Array(message.body.prefix(26 + 5)), parameters: legacy)
        }
    }

    @Test func aesgcmTamperingAndWrongKeysFailAuthentication() throws {
        let message = try valid(200, encoding: .aesgcm)
        let legacy = try #require(message.legacy)
        var tampered = message.body
        tampered[tampered.count - 1] ^= 1
        #expect(throws: WebPushError.authenticationFailure) {
            try decryptor.decryptAESGCM(tampered, parameters: legacy)
        }
        let otherSalt = try WebPushLegacyParameters(
            senderPublicKey: legacy.senderPublicKey, salt: [UInt8](repeating: 1, count: 16))
        #expect(throws: WebPushError.authenticationFailure) {
            try decryptor.decryptAESGCM(message.body, parameters: otherSalt)
        }
        #expect(throws: WebPushError.authenticationFailure) {
            try WebPushDecryptor(keys: try freshKeys()).decryptAESGCM(message.body, parameters: legacy)
        }
    }

    @Test func aesgcmHeadersAreParsedAndChecked() throws {
        let message = try valid(50, encoding: .aesgcm)
        let legacy = try #require(message.legacy)
        let dh = "dh=\(WebPushBase64URL.encode(legacy.senderPublicKey))"
        let salt = "salt=\(WebPushBase64URL.encode(legacy.salt))"
        let expected = [UInt8](repeating: 0x61, count: 50)
        // The forms servers send: with a VAPID key before or after, `;` or `,`, quoted, padded.
        for cryptoKey in [
            dh, "p256ecdsa=BAAA;\(dh)", "\(dh), p256ecdsa=BAAA",
            "keyid=p256dh;dh=\"\(WebPushBase64URL.encode(legacy.senderPublicKey))\"",
            "\(dh)=",
        ] {
            #expect(
                try decryptor.decrypt(
                    message.body, contentEncoding: "aesgcm", cryptoKey: cryptoKey, encryption: "\(salt); rs=4096")
                    == expected, "\(cryptoKey)")
        }
        let refused: [(cryptoKey: String?, encryption: String?, error: WebPushError)] = [
            (nil, salt, .missingParameter),
            ("p256ecdsa=BAAA", salt, .missingParameter),
            (dh, nil, .missingParameter),
            (dh, "rs=4096", .missingParameter),
            ("dh=not*base64", salt, .invalidParameter),
            ("dh=AAAA", salt, .invalidParameter),
            ("\(dh);dh=BBBB", salt, .invalidParameter),
            (dh, "salt=AAAA", .invalidParameter),
            (dh, "\(salt);rs=2", .invalidRecordSize),
            (dh, "\(salt);rs=-5", .invalidRecordSize),
            (dh, "\(salt);rs=99999999999999999999", .invalidRecordSize),
            (dh, "\(salt);rs=", .invalidRecordSize),
        ]
        for (cryptoKey, encryption, error) in refused {
            #expect(throws: error, "\(String(describing: cryptoKey)) \(String(describing: encryption))") {
                try decryptor.decrypt(
                    message.body, contentEncoding: "aesgcm", cryptoKey: cryptoKey, encryption: encryption)
            }
        }
    }

    @Test func anUnknownContentEncodingIsRefused() {
        for value in [nil, "", "gzip", "aesgcm128"] as [String?] {
            #expect(throws: WebPushError.unsupportedEncoding) {
                try decryptor.decrypt([1, 2, 3], contentEncoding: value, cryptoKey: nil, encryption: nil)
            }
        }
    }

    @Test func errorsNameTheProblemButNeverTheSecrets() throws {
        let body = try valid().body
        var tampered = body
        tampered[body.count - 1] ^= 1
        do {
            _ = try decryptor.decryptAES128GCM(tampered)
            Issue.record("a tampered message decrypted")
        } catch {
            #expect(error.recordIndex == 0)
            let text = "\(error)"
            #expect(text.hasPrefix("WebPushError.authenticationFailure"))
            for secret in [keys.base64URLPrivateKey, keys.base64URLAuthSecret] { #expect(!text.contains(secret)) }
        }
        do {
            _ = try WebPushSubscriptionKeys(
                base64URLPrivateKey: "sec!ret", base64URLAuthSecret: keys.base64URLAuthSecret)
            Issue.record("a malformed key was accepted")
        } catch {
            #expect(error == .invalidParameter)
            #expect(!"\(error)".contains("sec!ret"))
        }
    }
}
