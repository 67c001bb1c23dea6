import Testing

@testable import TidingsCore

/// ES256 (ECDSA P-256 with SHA-256) for VAPID: signatures verify, alter nothing without failing, and the
/// RFC 6979 A.2.5 signature of "sample" verifies under its key.
@Suite(.timeLimit(.minutes(1))) struct CryptoP256SigningTests {
    @Test func signaturesVerifyAndAnyChangeFails() throws {
        let key = try TidingsCrypto.P256.Signing.PrivateKey()
        let message = Array("eyJ0eXAiOiJKV1QiLCJhbGciOiJFUzI1NiJ9.eyJhdWQiOiJodHRwczovL3B1c2guZXhhbXBsZSJ9".utf8)
        let signature = try key.signature(for: message)
        #expect(signature.count == 64)
        #expect(key.publicKey.isValidSignature(signature, for: message))
        // A fresh nonce each time: two signatures differ, both verify.
        let again = try key.signature(for: message)
        #expect(again != signature)
        #expect(key.publicKey.isValidSignature(again, for: message))
        var altered = signature
        altered[10] ^= 1
        #expect(!key.publicKey.isValidSignature(altered, for: message))
        #expect(!key.publicKey.isValidSignature(signature, for: message + [0x2E]))
        #expect(!key.publicKey.isValidSignature(Array(signature.prefix(63)), for: message))
        #expect(!key.publicKey.isValidSignature([UInt8](repeating: 0, count: 64), for: message))
        let other = try TidingsCrypto.P256.Signing.PrivateKey()
        #expect(!other.publicKey.isValidSignature(signature, for: message))
        let reimported = try TidingsCrypto.P256.Signing.PrivateKey(rawRepresentation: key.rawRepresentation)
        #expect(reimported.publicKey == key.publicKey)
        #expect(!"\(key)".contains(hexString(key.rawRepresentation)))
    }

    @Test func rfc6979SampleSignatureVerifies() throws {
        // RFC 6979 A.2.5 (ECDSA, 256 bits (prime field)), SHA-256, message "sample".
        let publicKey = try TidingsCrypto.P256.Signing.PublicKey(
            x963Representation: hex(
                "04" + "60FED4BA255A9D31C961EB74C6356D68C049B8923B61FA6CE669622E60F29FB6"
                    + "7903FE1008B8BC99A41AE9E95628BC64F2F1B20C2D7E9F5177A3C294D4462299"))
        let signature = try hex(
            "EFD48B2AACB6A8FD1140DD9CD45E81D69D2C877B56AAF991C34D0EA84EAF3716"
                + "F7CB1C942D657C41D436C7A1B6E29F65F3E900DBB9AFF4064DC4AB2F843ACDA8")
        #expect(publicKey.isValidSignature(signature, for: Array("sample".utf8)))
        #expect(!publicKey.isValidSignature(signature, for: Array("test".utf8)))
        let privateKey = try TidingsCrypto.P256.Signing.PrivateKey(
            rawRepresentation: hex("C9AFA9D845BA75166B5C215767B1D6934E50C3DB36E89B127B8A622B120F6721"))
        #expect(privateKey.publicKey == publicKey)
    }
}
