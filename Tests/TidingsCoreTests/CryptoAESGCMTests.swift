import Testing

@testable import TidingsCore

@Suite(.timeLimit(.minutes(1))) struct CryptoAESGCMTests {
    @Test func matchesPublishedVectors() throws {
        let vectors = try CryptoFixtures.vectors("aes-gcm.json")
        #expect(vectors.count == 8)
        for vector in vectors {
            let name = vector["name"] ?? "?"
            let key = try TidingsCrypto.SymmetricKey(bytes: hex(vector["key"] ?? ""))
            let nonce = try hex(vector["iv"] ?? "")
            let aad = try hex(vector["aad"] ?? "")
            let plaintext = try hex(vector["pt"] ?? "")
            let sealed = try TidingsCrypto.AESGCM.seal(plaintext, key: key, nonce: nonce, authenticating: aad)
            #expect(hexString(sealed.ciphertext) == vector["ct"], "\(name) ciphertext")
            #expect(hexString(sealed.tag) == vector["tag"], "\(name) tag")
            let opened = try TidingsCrypto.AESGCM.open(
                hex(vector["ct"] ?? ""), tag: hex(vector["tag"] ?? ""), key: key, nonce: nonce, authenticating: aad)
            #expect(opened == plaintext, "\(name) round trip")
        }
    }

    @Test func publishedTagMismatchFails() throws {
        let vector = try #require(try CryptoFixtures.json("aes-gcm.json")["tagMismatch"] as? [String: String])
        let key = try TidingsCrypto.SymmetricKey(bytes: hex(vector["key"] ?? ""))
        #expect(throws: CryptoError.authenticationFailure) {
            try TidingsCrypto.AESGCM.open(
                hex(vector["ct"] ?? ""), tag: hex(vector["tag"] ?? ""), key: key, nonce: hex(vector["iv"] ?? ""),
                authenticating: hex(vector["aad"] ?? ""))
        }
    }

    @Test(arguments: [128, 256])
    func anyTamperingFailsAuthentication(bits: Int) throws {
        let key = TidingsCrypto.SymmetricKey.random(bitCount: bits)
        #expect(key.bytes.count == bits / 8)
        let plaintext = Array("a message that matters".utf8)
        let aad = Array("row 7".utf8)
        let nonce = TidingsCrypto.SecureRandom.bytes(TidingsCrypto.AESGCM.nonceByteCount)
        let sealed = try TidingsCrypto.AESGCM.seal(plaintext, key: key, nonce: nonce, authenticating: aad)
        #expect(sealed.ciphertext != plaintext)

        func flipped(_ bytes: [UInt8], at index: Int) -> [UInt8] {
            var copy = bytes
            copy[index] ^= 0x01
            return copy
        }
        for index in sealed.ciphertext.indices {
            #expect(throws: CryptoError.authenticationFailure) {
                try TidingsCrypto.AESGCM.open(
                    flipped(sealed.ciphertext, at: index), tag: sealed.tag, key: key, nonce: nonce,
                    authenticating: aad)
            }
        }
        for index in sealed.tag.indices {
            #expect(throws: CryptoError.authenticationFailure) {
                try TidingsCrypto.AESGCM.open(
                    sealed.ciphertext, tag: flipped(sealed.tag, at: index), key: key, nonce: nonce,
                    authenticating: aad)
            }
        }
        #expect(throws: CryptoError.authenticationFailure) {
            try TidingsCrypto.AESGCM.open(
                sealed.ciphertext, tag: sealed.tag, key: key, nonce: flipped(nonce, at: 11), authenticating: aad)
        }
        #expect(throws: CryptoError.authenticationFailure) {
            try TidingsCrypto.AESGCM.open(
                sealed.ciphertext, tag: sealed.tag, key: key, nonce: nonce, authenticating: [])
        }
        #expect(throws: CryptoError.authenticationFailure) {
            try TidingsCrypto.AESGCM.open(
                sealed.ciphertext, tag: sealed.tag, key: key, nonce: nonce, authenticating: flipped(aad, at: 0))
        }
        #expect(throws: CryptoError.authenticationFailure) {
            try TidingsCrypto.AESGCM.open(
                sealed.ciphertext, tag: sealed.tag, key: TidingsCrypto.SymmetricKey.random(bitCount: bits),
                nonce: nonce,
                authenticating: aad)
        }
        #expect(throws: CryptoError.authenticationFailure) {
            try TidingsCrypto.AESGCM.open(sealed.ciphertext, tag: Array(sealed.tag.prefix(12)), key: key, nonce: nonce)
        }
        #expect(
            try TidingsCrypto.AESGCM.open(
                sealed.ciphertext, tag: sealed.tag, key: key, nonce: nonce, authenticating: aad)
                == plaintext)
    }

    @Test func combinedBoxRoundTripsWithFreshNonces() throws {
        let key = TidingsCrypto.SymmetricKey.random()
        let plaintext = Array(repeating: UInt8(7), count: 1000)
        let first = try TidingsCrypto.AESGCM.sealCombined(plaintext, key: key, authenticating: [1, 2])
        let second = try TidingsCrypto.AESGCM.sealCombined(plaintext, key: key, authenticating: [1, 2])
        #expect(first.count == plaintext.count + 28)
        #expect(first.prefix(12) != second.prefix(12), "each box draws its own nonce")
        #expect(try TidingsCrypto.AESGCM.openCombined(first, key: key, authenticating: [1, 2]) == plaintext)
        #expect(try TidingsCrypto.AESGCM.openCombined(TidingsCrypto.AESGCM.sealCombined([], key: key), key: key) == [])
        #expect(throws: CryptoError.authenticationFailure) {
            try TidingsCrypto.AESGCM.openCombined(first, key: key, authenticating: [1, 3])
        }
    }

    @Test func malformedInputsFailTyped() throws {
        let key = TidingsCrypto.SymmetricKey.random()
        // Errors compare by kind, so the refused byte count is checked on its own.
        let key24 = #expect(throws: CryptoError.invalidKeySize) {
            try TidingsCrypto.SymmetricKey(bytes: Array(repeating: 0, count: 24))
        }
        #expect(key24?.byteCount == 24)
        let key0 = #expect(throws: CryptoError.invalidKeySize) { try TidingsCrypto.SymmetricKey(bytes: []) }
        #expect(key0?.byteCount == 0)
        let nonce16 = #expect(throws: CryptoError.invalidNonceSize) {
            try TidingsCrypto.AESGCM.seal([1], key: key, nonce: Array(repeating: 0, count: 16))
        }
        #expect(nonce16?.byteCount == 16)
        let nonce0 = #expect(throws: CryptoError.invalidNonceSize) {
            try TidingsCrypto.AESGCM.open([1], tag: Array(repeating: 0, count: 16), key: key, nonce: [])
        }
        #expect(nonce0?.byteCount == 0)
        for length in [0, 1, 12, 27] {
            #expect(throws: CryptoError.self) {
                try TidingsCrypto.AESGCM.openCombined(Array(repeating: 0, count: length), key: key)
            }
        }
        #expect(throws: CryptoError.authenticationFailure) {
            try TidingsCrypto.AESGCM.openCombined(TidingsCrypto.SecureRandom.bytes(28), key: key)
        }
    }

    @Test func keyDescriptionHidesKeyBytes() throws {
        let key = try TidingsCrypto.SymmetricKey(bytes: Array(repeating: 0xAB, count: 32))
        #expect(key.description == "SymmetricKey(256 bits, redacted)")
        #expect(!"\(key)".lowercased().contains("ab"))
        #expect(!String(reflecting: key).contains("171"))
        #expect(key == (try TidingsCrypto.SymmetricKey(bytes: Array(repeating: 0xAB, count: 32))))
        #expect(key != TidingsCrypto.SymmetricKey.random())
    }

    @Test func secureRandomGivesRequestedDistinctBytes() {
        #expect(TidingsCrypto.SecureRandom.bytes(0) == [])
        #expect(TidingsCrypto.SecureRandom.bytes(-3) == [])
        let first = TidingsCrypto.SecureRandom.bytes(32)
        #expect(first.count == 32)
        #expect(first != TidingsCrypto.SecureRandom.bytes(32))
    }
}
