import Testing

@testable import TidingsCore

/// PBKDF2-HMAC-SHA256 against published vectors; the expected values were checked with Python's
/// `hashlib.pbkdf2_hmac("sha256", …)`, an implementation independent of the one under test.
@Suite(.timeLimit(.minutes(1))) struct CryptoPBKDF2Tests {
    @Test func matchesKnownVectors() throws {
        let vectors: [(password: String, salt: String, iterations: Int, length: Int, expected: String)] = [
            ("password", "salt", 1, 32, "120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b"),
            ("password", "salt", 4096, 32, "c5e478d59288c841aa530db6845c4c8d962893a001ce4e11a4963873aa98134a"),
            (
                "passwordPASSWORDpassword", "saltSALTsaltSALTsaltSALTsaltSALTsalt", 4096, 40,
                "348c89dbcbd32b2f32d814b8116e84cf2b17347ebc1800181c4e2a1fb8dd53e1c635518c7dac47e9"
            ),
            ("pass\0word", "sa\0lt", 4096, 16, "89b69d0516f829893c696226650a8687"),
            ("", "", 1, 32, "f7ce0b653d2d72a4108cf5abe912ffdd777616dbbb27a70e8204f3ae2d0f6fad"),
        ]
        for vector in vectors {
            let derived = try TidingsCrypto.PBKDF2.deriveKey(
                password: Array(vector.password.utf8), salt: Array(vector.salt.utf8), iterations: vector.iterations,
                outputByteCount: vector.length)
            #expect(hexString(derived) == vector.expected, "\(vector.password) / \(vector.iterations)")
        }
    }

    @Test func refusesParametersOutsideItsBounds() {
        for (iterations, length) in [(0, 32), (-1, 32), (10_000_001, 32), (1, 0), (1, 1025), (1, -5)] {
            #expect(throws: CryptoError.invalidInput) {
                try TidingsCrypto.PBKDF2.deriveKey(
                    password: [1], salt: [2], iterations: iterations, outputByteCount: length)
            }
        }
    }
}
