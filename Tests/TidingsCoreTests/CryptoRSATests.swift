import Foundation
import PeerSupport
import Testing

@testable import TidingsCore

@Suite(.timeLimit(.minutes(1))) struct CryptoRSATests {
    /// One generated key shared by the tests of this suite: 2048-bit generation is the slow part.
    static let key: TidingsCrypto.RSA.PrivateKey? = try? TidingsCrypto.RSA.PrivateKey()

    static func interop(_ field: String) throws -> String {
        try #require(try CryptoFixtures.json("rsa-interop.json")[field] as? String)
    }

    static func interopBlock(_ field: String) throws -> [UInt8] {
        let text = try interop(field)
        return [UInt8](try #require(Data(base64Encoded: text)))
    }

    @Test(arguments: [TidingsCrypto.RSA.Padding.oaepSHA1, .pkcs1v15])
    func roundTripsWithBothPaddings(padding: TidingsCrypto.RSA.Padding) throws {
        let key = try #require(Self.key)
        #expect(key.bitCount == 2048)
        let message = Array(#"{"nid":1,"app":"spreed"}"#.utf8)
        let block = try key.publicKey.encrypt(message, padding: padding)
        #expect(block.count == 256)
        #expect(try key.decrypt(block, padding: padding) == message)
        // Both paddings are randomised.
        #expect(try key.publicKey.encrypt(message, padding: padding) != block)
        // The longest plaintext that fits, and one byte more.
        let limit = padding.maximumPlaintextByteCount(modulusByteCount: 256)
        let longest = [UInt8](repeating: 0x5A, count: limit)
        #expect(try key.decrypt(key.publicKey.encrypt(longest, padding: padding), padding: padding) == longest)
        #expect(throws: CryptoError.self) { try key.publicKey.encrypt(longest + [0], padding: padding) }
        #expect(try key.decrypt(key.publicKey.encrypt([], padding: padding), padding: padding) == [])
    }

    @Test func decryptsBlocksMadeByPythonCryptography() throws {
        let key = try TidingsCrypto.RSA.PrivateKey(pemRepresentation: Self.interop("privateKeyPEM"))
        let plaintext = Array(try Self.interop("plaintext").utf8)
        let oaep = try Self.interopBlock("oaepSHA1Base64")
        let v15 = try Self.interopBlock("pkcs1v15Base64")
        #expect(try key.decrypt(oaep, padding: .oaepSHA1) == plaintext)
        #expect(try key.decrypt(v15, padding: .pkcs1v15) == plaintext)
        // The wrong padding never yields the plaintext (Nextcloud's client tries OAEP, then v1.5).
        #expect(throws: CryptoError.decryptionFailure) { try key.decrypt(v15, padding: .oaepSHA1) }
        #expect((try? key.decrypt(oaep, padding: .pkcs1v15)) != plaintext)
        #expect(key.publicKey.pemRepresentation == (try Self.interop("publicKeyPEM")))
    }

    @Test func pemExportAndImportRoundTrip() throws {
        let key = try #require(Self.key)
        #expect(key.pemRepresentation.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        #expect(key.publicKey.pemRepresentation.hasPrefix("-----BEGIN PUBLIC KEY-----\n"))
        #expect(key.publicKey.pemRepresentation.hasSuffix("-----END PUBLIC KEY-----\n"))
        let reimported = try TidingsCrypto.RSA.PrivateKey(pemRepresentation: key.pemRepresentation)
        #expect(reimported.pemRepresentation == key.pemRepresentation)
        let publicKey = try TidingsCrypto.RSA.PublicKey(pemRepresentation: key.publicKey.pemRepresentation)
        #expect(publicKey.pemRepresentation == key.publicKey.pemRepresentation)
        let block = try publicKey.encrypt([1, 2, 3], padding: .oaepSHA1)
        #expect(try reimported.decrypt(block, padding: .oaepSHA1) == [1, 2, 3])
        #expect(!key.description.contains("BEGIN"))
    }

    @Test func wrongKeyFailsTyped() throws {
        let key = try #require(Self.key)
        let other = try TidingsCrypto.RSA.PrivateKey(pemRepresentation: Self.interop("privateKeyPEM"))
        let secret = Array("secret".utf8)
        let oaep = try key.publicKey.encrypt(secret, padding: .oaepSHA1)
        #expect(throws: CryptoError.decryptionFailure) { try other.decrypt(oaep, padding: .oaepSHA1) }
        // PKCS#1 v1.5 rejects implicitly: a wrong key yields synthetic bytes, never the plaintext.
        let v15 = try key.publicKey.encrypt(secret, padding: .pkcs1v15)
        #expect((try? other.decrypt(v15, padding: .pkcs1v15)) != secret)
        // With both keys fixed the outcome is deterministic: the fixture's blocks fail under our key.
        #expect(throws: CryptoError.decryptionFailure) {
            try key.decrypt(Self.interopBlock("oaepSHA1Base64"), padding: .oaepSHA1)
        }
    }

    @Test func garbageBlocksFailTypedNeverCrash() throws {
        let fixed = try TidingsCrypto.RSA.PrivateKey(pemRepresentation: Self.interop("privateKeyPEM"))
        // A fixed garbage block under a fixed key: deterministic typed failures with both paddings.
        var generator = SplitMix64(seed: 0x7469_6469_6E67_73)
        let garbage = (0..<256).map { _ in UInt8(truncatingIfNeeded: generator.next()) & 0x7F }
        #expect(throws: CryptoError.decryptionFailure) { try fixed.decrypt(garbage, padding: .oaepSHA1) }
        // PKCS#1 v1.5 rejects implicitly: bad padding yields synthetic bytes, never a distinguishable
        // error (CryptoRSAImplicitRejectionTests); only a block at or above the modulus is refused.
        #expect(try fixed.decrypt(garbage, padding: .pkcs1v15) != [])
        for block in [[UInt8](repeating: 0, count: 256), [UInt8](repeating: 0xFF, count: 256)] {
            #expect(throws: CryptoError.self) { try fixed.decrypt(block, padding: .oaepSHA1) }
        }
        #expect(throws: CryptoError.decryptionFailure) {
            try fixed.decrypt([UInt8](repeating: 0xFF, count: 256), padding: .pkcs1v15)
        }
        // Random blocks: OAEP always refuses; v1.5 never crashes and refuses only blocks above the modulus.
        for _ in 0..<20 {
            let random = TidingsCrypto.SecureRandom.bytes(256)
            #expect(throws: CryptoError.self) { try fixed.decrypt(random, padding: .oaepSHA1) }
            do {
                _ = try fixed.decrypt(random, padding: .pkcs1v15)
            } catch {
                #expect(error == .decryptionFailure)
                #expect(random[0] >= 0xBF, "only a block not below the modulus (0xbf…) may be refused")
            }
        }
        for length in [0, 1, 255, 257, 512] {
            #expect(throws: CryptoError.self) {
                try fixed.decrypt(TidingsCrypto.SecureRandom.bytes(length), padding: .oaepSHA1)
            }
        }
    }

    @Test func badPEMFailsTyped() throws {
        let key = try #require(Self.key)
        let privatePEM = key.pemRepresentation
        let truncated = String(privatePEM.prefix(privatePEM.count / 2)) + "\n-----END PRIVATE KEY-----\n"
        let corrupted = privatePEM.replacingOccurrences(of: "M", with: "A")
        for text in ["", "hello", truncated, corrupted, key.publicKey.pemRepresentation] {
            #expect(throws: CryptoError.self) { try TidingsCrypto.RSA.PrivateKey(pemRepresentation: text) }
        }
        for text in ["", privatePEM, "-----BEGIN PUBLIC KEY-----\n!!!!\n-----END PUBLIC KEY-----\n"] {
            #expect(throws: CryptoError.self) { try TidingsCrypto.RSA.PublicKey(pemRepresentation: text) }
        }
        #expect(throws: CryptoError.self) { try TidingsCrypto.RSA.PrivateKey(bitCount: 1024) }
        #expect(throws: CryptoError.self) { try TidingsCrypto.RSA.PrivateKey(bitCount: 8192) }
    }

    @Test func derWrappersMatchOpenSSLEncodings() throws {
        // The Apple backend builds PEM from PKCS#1 with these helpers; OpenSSL's own output is the reference.
        let key = try #require(Self.key)
        let spki = try TidingsCrypto.PEM.decode(key.publicKey.pemRepresentation, label: "PUBLIC KEY")
        let pkcs1Public = try RSAKeyDER.pkcs1PublicKey(fromSubjectPublicKeyInfo: spki)
        #expect(pkcs1Public.first == 0x30)
        #expect(RSAKeyDER.subjectPublicKeyInfo(wrapping: pkcs1Public) == spki)
        let pkcs8 = try TidingsCrypto.PEM.decode(key.pemRepresentation, label: "PRIVATE KEY")
        let pkcs1Private = try RSAKeyDER.pkcs1PrivateKey(fromPKCS8: pkcs8)
        #expect(RSAKeyDER.pkcs8(wrapping: pkcs1Private) == pkcs8)
        #expect(TidingsCrypto.PEM.encode(spki, label: "PUBLIC KEY") == key.publicKey.pemRepresentation)
        // Truncations at every length fail typed instead of reading past the end.
        for length in 0..<spki.count {
            #expect(throws: CryptoError.self) {
                try RSAKeyDER.pkcs1PublicKey(fromSubjectPublicKeyInfo: Array(spki.prefix(length)))
            }
        }
        #expect(throws: CryptoError.self) { try RSAKeyDER.pkcs1PrivateKey(fromPKCS8: spki) }
    }
}

@Suite(.timeLimit(.minutes(1))) struct CryptoMalformedInputTests {
    @Test func mutatedPublicKeysNeverCrash() throws {
        let pem = try CryptoFixtures.json("rsa-interop.json")["publicKeyPEM"] as? String ?? ""
        let der = try TidingsCrypto.PEM.decode(pem, label: "PUBLIC KEY")
        var generator = SplitMix64(seed: 2024)
        var accepted = 0
        for _ in 0..<300 {
            var mutated = der
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let index = Int.random(in: 0..<mutated.count, using: &generator)
                mutated[index] = UInt8.random(in: 0...255, using: &generator)
            }
            if Bool.random(using: &generator) {
                mutated = Array(mutated.prefix(Int.random(in: 0...der.count, using: &generator)))
            }
            // Every failure is a typed CryptoError (the initializer throws nothing else); a flip
            // inside the modulus may still yield a different but valid key.
            if (try? TidingsCrypto.RSA.PublicKey(
                pemRepresentation: TidingsCrypto.PEM.encode(mutated, label: "PUBLIC KEY"))) != nil
            {
                accepted += 1
            }
        }
        #expect(accepted < 300)
    }

    @Test func randomBytesNeverCrashAnyParser() {
        var generator = SplitMix64(seed: 7)
        let key = TidingsCrypto.SymmetricKey.random()
        for length in [0, 1, 12, 27, 28, 29, 64, 65, 300] {
            for _ in 0..<20 {
                let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
                #expect(throws: CryptoError.self) { try TidingsCrypto.AESGCM.openCombined(bytes, key: key) }
                #expect(throws: CryptoError.self) {
                    try TidingsCrypto.P256.KeyAgreement.PublicKey(x963Representation: bytes)
                }
                #expect(throws: CryptoError.self) { try RSAKeyDER.pkcs1PublicKey(fromSubjectPublicKeyInfo: bytes) }
                #expect(throws: CryptoError.self) { try RSAKeyDER.pkcs1PrivateKey(fromPKCS8: bytes) }
                let text = String(decoding: bytes, as: UTF8.self)
                #expect(throws: CryptoError.self) { try TidingsCrypto.RSA.PrivateKey(pemRepresentation: text) }
            }
        }
    }
}
