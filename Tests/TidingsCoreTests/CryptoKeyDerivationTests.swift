import Testing

@testable import TidingsCore

@Suite(.timeLimit(.minutes(1))) struct CryptoKeyDerivationTests {
    @Test func hmacMatchesRFC4231() throws {
        let vectors = try CryptoFixtures.vectors("hmac-sha256.json")
        #expect(vectors.count == 7)
        for vector in vectors {
            let key = try hex(vector["key"] ?? "")
            let data = try hex(vector["data"] ?? "")
            let expected = vector["mac"] ?? ""
            let mac = TidingsCrypto.HMACSHA256.authenticationCode(for: data, key: key)
            // Test case 5 publishes only the first 128 bits.
            #expect(hexString(mac).hasPrefix(expected), "\(vector["name"] ?? "?")")
            #expect(expected.count >= 32)
        }
    }

    @Test func hmacVerificationRejectsAnyChange() {
        let key = TidingsCrypto.SecureRandom.bytes(32)
        let message = Array("payload".utf8)
        let mac = TidingsCrypto.HMACSHA256.authenticationCode(for: message, key: key)
        #expect(TidingsCrypto.HMACSHA256.isValidAuthenticationCode(mac, for: message, key: key))
        #expect(!TidingsCrypto.HMACSHA256.isValidAuthenticationCode(mac, for: Array("payloaD".utf8), key: key))
        #expect(!TidingsCrypto.HMACSHA256.isValidAuthenticationCode(Array(mac.dropLast()), for: message, key: key))
        #expect(
            !TidingsCrypto.HMACSHA256.isValidAuthenticationCode(
                mac, for: message, key: TidingsCrypto.SecureRandom.bytes(32)))
        // Empty keys and messages are legal HMAC inputs.
        #expect(TidingsCrypto.HMACSHA256.authenticationCode(for: [], key: []).count == 32)
        #expect(
            TidingsCrypto.HMACSHA256.authenticationCode(for: [], key: [])
                != TidingsCrypto.HMACSHA256.authenticationCode(for: [0], key: []))
    }

    @Test func hkdfMatchesRFC5869() throws {
        let vectors = try CryptoFixtures.vectors("hkdf-sha256.json")
        #expect(vectors.count == 3)
        for vector in vectors {
            let name = vector["name"] ?? "?"
            let ikm = try hex(vector["ikm"] ?? "")
            let salt = try hex(vector["salt"] ?? "")
            let info = try hex(vector["info"] ?? "")
            let length = try #require(Int(vector["length"] ?? ""))
            let prk = TidingsCrypto.HKDF.extract(inputKeyMaterial: ikm, salt: salt)
            #expect(hexString(prk) == vector["prk"], "\(name) PRK")
            #expect(
                hexString(try TidingsCrypto.HKDF.expand(pseudoRandomKey: prk, info: info, outputByteCount: length))
                    == vector["okm"],
                "\(name) OKM")
            #expect(
                hexString(
                    try TidingsCrypto.HKDF.deriveKey(
                        inputKeyMaterial: ikm, salt: salt, info: info, outputByteCount: length))
                    == vector["okm"], "\(name) one call")
        }
    }

    @Test func hkdfOutputLengthLimits() throws {
        let prk = TidingsCrypto.HKDF.extract(inputKeyMaterial: [1, 2, 3], salt: [])
        #expect(try TidingsCrypto.HKDF.expand(pseudoRandomKey: prk, info: [], outputByteCount: 0) == [])
        let longest = try TidingsCrypto.HKDF.expand(pseudoRandomKey: prk, info: [9], outputByteCount: 255 * 32)
        #expect(longest.count == 8160)
        // Each length is a prefix of a longer output (RFC 5869 expands block by block).
        #expect(
            try TidingsCrypto.HKDF.expand(pseudoRandomKey: prk, info: [9], outputByteCount: 33)
                == Array(longest.prefix(33)))
        #expect(throws: CryptoError.self) {
            try TidingsCrypto.HKDF.expand(pseudoRandomKey: prk, info: [], outputByteCount: 8161)
        }
        #expect(throws: CryptoError.self) {
            try TidingsCrypto.HKDF.expand(pseudoRandomKey: prk, info: [], outputByteCount: -1)
        }
        #expect(throws: CryptoError.self) {
            try TidingsCrypto.HKDF.expand(pseudoRandomKey: [1], info: [], outputByteCount: 16)
        }
    }
}
