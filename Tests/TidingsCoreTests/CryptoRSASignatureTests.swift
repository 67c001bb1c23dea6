import Foundation
import Testing

@testable import TidingsCore

@Suite(.timeLimit(.minutes(1))) struct CryptoRSASignatureTests {
    static func interopKey() throws -> TidingsCrypto.RSA.PrivateKey {
        let pem = try #require(try CryptoFixtures.json("rsa-interop.json")["privateKeyPEM"] as? String)
        return try TidingsCrypto.RSA.PrivateKey(pemRepresentation: pem)
    }

    static func bytes(_ vector: [String: String], _ field: String) throws -> [UInt8] {
        let text = try #require(vector[field])
        return [UInt8](try #require(Data(base64Encoded: text)))
    }

    @Test func signsAndVerifiesExactlyAsPythonCryptography() throws {
        let key = try Self.interopKey()
        let vectors = try CryptoFixtures.vectors("rsa-signature.json")
        #expect(vectors.count == 3)
        for vector in vectors {
            let message = try Self.bytes(vector, "messageBase64")
            let signature = try Self.bytes(vector, "signatureBase64")
            // PKCS#1 v1.5 signatures are deterministic, so ours must be byte for byte Python's.
            #expect(try key.signatureSHA512PKCS1(for: message) == signature)
            #expect(key.publicKey.isValidSignatureSHA512PKCS1(signature, for: message))
        }
    }

    @Test func rejectsForgeriesWithoutThrowing() throws {
        let key = try Self.interopKey()
        let other = try TidingsCrypto.RSA.PrivateKey()
        let message = Array("subject".utf8)
        let signature = try key.signatureSHA512PKCS1(for: message)
        #expect(!key.publicKey.isValidSignatureSHA512PKCS1(signature, for: Array("subjecT".utf8)))
        #expect(!other.publicKey.isValidSignatureSHA512PKCS1(signature, for: message))
        var flipped = signature
        flipped[100] ^= 0x01
        #expect(!key.publicKey.isValidSignatureSHA512PKCS1(flipped, for: message))
        #expect(!key.publicKey.isValidSignatureSHA512PKCS1(Array(signature.dropLast()), for: message))
        #expect(!key.publicKey.isValidSignatureSHA512PKCS1([], for: message))
        #expect(!key.publicKey.isValidSignatureSHA512PKCS1([UInt8](repeating: 0xFF, count: 256), for: message))
    }
}
