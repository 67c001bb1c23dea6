import Testing

@testable import TidingsCore

@Suite(.timeLimit(.minutes(1))) struct CryptoECDHTests {
    @Test func matchesRFC5903Section8_1() throws {
        let vector = try #require(try CryptoFixtures.vectors("ecdh-p256.json").first)
        let initiator = try TidingsCrypto.P256.KeyAgreement.PrivateKey(rawRepresentation: hex(vector["i"] ?? ""))
        let responder = try TidingsCrypto.P256.KeyAgreement.PrivateKey(rawRepresentation: hex(vector["r"] ?? ""))
        #expect(hexString(initiator.publicKey.x963Representation) == vector["gi"])
        #expect(hexString(responder.publicKey.x963Representation) == vector["gr"])
        let responderPublic = try TidingsCrypto.P256.KeyAgreement.PublicKey(x963Representation: hex(vector["gr"] ?? ""))
        let initiatorPublic = try TidingsCrypto.P256.KeyAgreement.PublicKey(x963Representation: hex(vector["gi"] ?? ""))
        #expect(hexString(try initiator.sharedSecretFromKeyAgreement(with: responderPublic)) == vector["shared"])
        #expect(hexString(try responder.sharedSecretFromKeyAgreement(with: initiatorPublic)) == vector["shared"])
    }

    @Test func generatedKeysAgreeAndRoundTrip() throws {
        let alice = try TidingsCrypto.P256.KeyAgreement.PrivateKey()
        let bob = try TidingsCrypto.P256.KeyAgreement.PrivateKey()
        #expect(alice.rawRepresentation != bob.rawRepresentation)
        #expect(alice.publicKey.x963Representation.count == 65)
        let secret = try alice.sharedSecretFromKeyAgreement(with: bob.publicKey)
        #expect(secret.count == 32)
        #expect(secret == (try bob.sharedSecretFromKeyAgreement(with: alice.publicKey)))
        let reimported = try TidingsCrypto.P256.KeyAgreement.PrivateKey(rawRepresentation: alice.rawRepresentation)
        #expect(reimported.publicKey == alice.publicKey)
        #expect(
            try TidingsCrypto.P256.KeyAgreement.PublicKey(x963Representation: alice.publicKey.x963Representation)
                == alice.publicKey)
        #expect(!alice.description.contains(hexString(alice.rawRepresentation)))
    }

    @Test func rejectsBadPrivateScalars() throws {
        let order = try hex("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")
        for bad in [[UInt8](repeating: 0, count: 32), order, [UInt8](repeating: 0xFF, count: 32), [1], []] {
            #expect(throws: CryptoError.self) { try TidingsCrypto.P256.KeyAgreement.PrivateKey(rawRepresentation: bad) }
        }
        var orderMinusOne = order
        orderMinusOne[31] -= 1
        #expect(throws: Never.self) { try TidingsCrypto.P256.KeyAgreement.PrivateKey(rawRepresentation: orderMinusOne) }
    }

    @Test func rejectsPointsOffTheCurveAndBadEncodings() throws {
        let valid = try TidingsCrypto.P256.KeyAgreement.PrivateKey().publicKey.x963Representation
        var offCurve = valid
        offCurve[64] ^= 0x01
        var compressedPrefix = valid
        compressedPrefix[0] = 0x02
        let garbage = TidingsCrypto.SecureRandom.bytes(64)
        for bad in [offCurve, compressedPrefix, [0x04] + garbage, Array(valid.prefix(33)), [], valid + [0]] {
            #expect(throws: CryptoError.self) { try TidingsCrypto.P256.KeyAgreement.PublicKey(x963Representation: bad) }
        }
        // The point at infinity has no uncompressed encoding; all-zero coordinates are off the curve.
        #expect(throws: CryptoError.self) {
            try TidingsCrypto.P256.KeyAgreement.PublicKey(x963Representation: [0x04] + [UInt8](repeating: 0, count: 64))
        }
    }
}
