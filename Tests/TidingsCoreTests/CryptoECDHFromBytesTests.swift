import Testing

@testable import TidingsCore

/// ECDH with the peer point still in bytes (the package-level entry Web Push uses): the same secret as the
/// public API, and the same refusals.
@Suite(.timeLimit(.minutes(1))) struct CryptoECDHFromBytesTests {
    @Test func matchesRFC5903AndThePublicAPI() throws {
        let vector = try #require(try CryptoFixtures.vectors("ecdh-p256.json").first)
        let initiator = try TidingsCrypto.P256.KeyAgreement.PrivateKey(rawRepresentation: hex(vector["i"] ?? ""))
        #expect(
            hexString(try initiator.sharedSecretFromKeyAgreement(withX963Representation: hex(vector["gr"] ?? "")))
                == vector["shared"])
        for _ in 0..<20 {
            let alice = try TidingsCrypto.P256.KeyAgreement.PrivateKey()
            let bob = try TidingsCrypto.P256.KeyAgreement.PrivateKey()
            #expect(
                try alice.sharedSecretFromKeyAgreement(withX963Representation: bob.publicKey.x963Representation)
                    == (try alice.sharedSecretFromKeyAgreement(with: bob.publicKey)))
        }
    }

    @Test func refusesWhatThePublicKeyInitRefuses() throws {
        let own = try TidingsCrypto.P256.KeyAgreement.PrivateKey()
        let valid = try TidingsCrypto.P256.KeyAgreement.PrivateKey().publicKey.x963Representation
        var offCurve = valid
        offCurve[64] ^= 0x01
        var compressedPrefix = valid
        compressedPrefix[0] = 0x02
        let zero = [0x04] + [UInt8](repeating: 0, count: 64)
        for bad in [offCurve, compressedPrefix, zero, Array(valid.prefix(33)), [], valid + [0]] {
            #expect(throws: CryptoError.invalidKey) {
                try own.sharedSecretFromKeyAgreement(withX963Representation: bad)
            }
        }
    }
}
