import Testing
import TidingsCore

/// Secret keys never show their material, neither in string interpolation nor in `dump(_:)`.
@Suite(.timeLimit(.minutes(1))) struct CryptoKeyRedactionTests {
    private func dumped(_ value: some Any) -> String {
        var text = ""
        dump(value, to: &text)
        return text
    }

    @Test func symmetricKeyDumpShowsNoBytes() throws {
        let key = try TidingsCrypto.SymmetricKey(bytes: Array(repeating: 0xAB, count: 32))
        for text in ["\(key)", String(reflecting: key), dumped(key), dumped([key])] {
            #expect(!text.contains("171"), "\(text)")
            #expect(text.contains("256"), "\(text)")
        }
    }

    @Test func p256PrivateKeyDumpShowsNoScalar() throws {
        let key = try TidingsCrypto.P256.KeyAgreement.PrivateKey()
        let scalar = key.rawRepresentation.map(String.init).joined(separator: "\n")
        let text = dumped(key)
        #expect(!text.contains(scalar))
        #expect(!text.contains("rawRepresentation"))
    }

    @Test func rsaPrivateKeyDumpShowsNoPEM() throws {
        let key = try TidingsCrypto.RSA.PrivateKey(pemRepresentation: CryptoRSATests.interop("privateKeyPEM"))
        let text = dumped(key)
        #expect(!text.contains("PRIVATE KEY"))
        #expect(text.contains("2048"))
    }
}
