import Foundation
import PeerSupport
import Testing

@testable import TidingsCore

/// PKCS#1 v1.5 decryption never tells a caller (or an attacker timing the caller) whether the
/// padding was valid: a malformed block decrypts to a deterministic synthetic message instead.
@Suite(.timeLimit(.minutes(1))) struct CryptoRSAImplicitRejectionTests {
    static func fixtureKey() throws -> TidingsCrypto.RSA.PrivateKey {
        try TidingsCrypto.RSA.PrivateKey(pemRepresentation: CryptoRSATests.interop("privateKeyPEM"))
    }

    @Test func decryptsExactlyAsOpenSSLWithImplicitRejection() throws {
        let key = try Self.fixtureKey()
        let vectors = try CryptoFixtures.vectors("rsa-implicit-rejection.json")
        #expect(vectors.count >= 10)
        for vector in vectors {
            let name = vector["name"] ?? "?"
            let ciphertext = try hex(try #require(vector["ciphertext"]))
            let expected = try hex(try #require(vector["plaintext"]))
            do {
                #expect(try key.decrypt(ciphertext, padding: .pkcs1v15) == expected, "\(name)")
            } catch {
                Issue.record("\(name): threw \(error) instead of returning bytes")
            }
            #if TIDINGS_OPENSSL
                // The library's own implicit rejection (OpenSSL >= 3.2) and Tidings' code for older
                // libraries agree; the latter is checked even where the former is in use.
                let ours = try? RSABackend.decryptRejectingImplicitly(ciphertext, key: key.handle)
                #expect(ours == expected, "\(name)")
            #endif
        }
    }

    @Test func malformedBlocksDecryptToDeterministicPseudoRandomBytes() throws {
        let key = try Self.fixtureKey()
        var generator = SplitMix64(seed: 0x7469_6469_6E67_73)
        // The top bit clear keeps the block below the modulus, so it is a well-formed ciphertext.
        let garbage = (0..<256).map { _ in UInt8(truncatingIfNeeded: generator.next()) & 0x7F }
        let first = try key.decrypt(garbage, padding: .pkcs1v15)
        #expect(try key.decrypt(garbage, padding: .pkcs1v15) == first, "the same block gives the same bytes")
        #expect(first.count <= TidingsCrypto.RSA.Padding.pkcs1v15.maximumPlaintextByteCount(modulusByteCount: 256))
        var other = garbage
        other[200] ^= 1
        #expect(try key.decrypt(other, padding: .pkcs1v15) != first, "another block gives other bytes")
        // The synthetic message depends on the private key, so nobody without it can predict it.
        let otherKey = try #require(CryptoRSATests.key)
        #expect((try? otherKey.decrypt(garbage, padding: .pkcs1v15)) != first)
    }

    @Test func privateExponentFromPKCS1MatchesOpenSSL() throws {
        // The Apple backend reads `d` from PKCS#1 for the key derivation key; OpenSSL's is the reference.
        let key = try #require(CryptoRSATests.key)
        let pkcs1 = try RSAKeyDER.pkcs1PrivateKey(
            fromPKCS8: TidingsCrypto.PEM.decode(key.pemRepresentation, label: "PRIVATE KEY"))
        let exponent = try RSAKeyDER.privateExponent(fromPKCS1: pkcs1, byteCount: 256)
        #expect(exponent.count == 256)
        #if TIDINGS_OPENSSL
            #expect(try RSABackend.privateExponent(key.handle, byteCount: 256) == exponent)
        #endif
        #expect(throws: CryptoError.self) { try RSAKeyDER.privateExponent(fromPKCS1: pkcs1, byteCount: 16) }
        for length in stride(from: 0, to: pkcs1.count, by: 7) {
            #expect(throws: CryptoError.self) {
                try RSAKeyDER.privateExponent(fromPKCS1: Array(pkcs1.prefix(length)), byteCount: 256)
            }
        }
    }

    @Test func blocksAtOrAboveTheModulusAreRejectedOpenly() throws {
        // Whether a block is below the modulus depends on public values only: no oracle.
        let key = try Self.fixtureKey()
        #expect(throws: CryptoError.decryptionFailure) {
            try key.decrypt([UInt8](repeating: 0xFF, count: 256), padding: .pkcs1v15)
        }
        #expect(throws: CryptoError.self) { try key.decrypt([UInt8](repeating: 0, count: 255), padding: .pkcs1v15) }
    }
}
