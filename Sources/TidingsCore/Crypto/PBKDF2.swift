#if TIDINGS_OPENSSL
    import COpenSSL
#else
    import CommonCrypto
#endif

extension TidingsCrypto {
    /// `TidingsCrypto.PBKDF2` is the password-based key derivation function 2 of RFC 8018 with HMAC-SHA256.
    ///
    /// It turns a password (or any secret given as bytes) and a salt into key material, slowed down on purpose
    /// by `iterations` rounds. For example:
    ///
    /// ```swift
    /// let bytes = try TidingsCrypto.PBKDF2.deriveKey(
    ///     password: Array("secret".utf8), salt: salt, iterations: 100_000, outputByteCount: 32)
    /// ```
    ///
    /// It runs on OpenSSL's `PKCS5_PBKDF2_HMAC` on Linux and CommonCrypto's `CCKeyDerivationPBKDF` on Apple
    /// platforms, each a single call.
    public enum PBKDF2 {
        /// The most rounds accepted, so a bad input cannot hold a thread for minutes.
        public static let maximumIterations = 10_000_000
        /// The largest output accepted.
        public static let maximumOutputByteCount = 1024

        /// Derives `outputByteCount` bytes from `password` and `salt` with PBKDF2-HMAC-SHA256.
        ///
        /// - Throws: `CryptoError.invalidInput` when `iterations` is outside 1...10,000,000, `outputByteCount`
        ///   outside 1...1024 or an input beyond 2 GiB; `CryptoError.backend` when the platform call fails.
        public static func deriveKey(password: [UInt8], salt: [UInt8], iterations: Int, outputByteCount: Int)
            throws(CryptoError) -> [UInt8]
        {
            guard (1...maximumIterations).contains(iterations) else {
                throw .invalidInput("PBKDF2 iterations \(iterations); allowed 1...\(maximumIterations)")
            }
            guard (1...maximumOutputByteCount).contains(outputByteCount) else {
                throw .invalidInput("PBKDF2 output of \(outputByteCount) bytes; allowed 1...\(maximumOutputByteCount)")
            }
            guard password.count <= Int(Int32.max), salt.count <= Int(Int32.max) else {
                throw .invalidInput("PBKDF2 password or salt beyond 2 GiB")
            }
            var output = [UInt8](repeating: 0, count: outputByteCount)
            // One-byte stand-ins keep the pointers non-null for an empty password or salt; the lengths stay 0.
            let passwordBytes = password.isEmpty ? [0] : password
            let saltBytes = salt.isEmpty ? [0] : salt
            #if TIDINGS_OPENSSL
                let status = passwordBytes.withUnsafeBufferPointer { passwordBuffer in
                    passwordBuffer.withMemoryRebound(to: CChar.self) { passwordChars in
                        PKCS5_PBKDF2_HMAC(
                            passwordChars.baseAddress, Int32(password.count), saltBytes, Int32(salt.count),
                            Int32(iterations), EVP_sha256(), Int32(outputByteCount), &output)
                    }
                }
                guard status == 1 else { throw .backend("PKCS5_PBKDF2_HMAC") }
            #else
                let status = passwordBytes.withUnsafeBufferPointer { passwordBuffer in
                    passwordBuffer.withMemoryRebound(to: CChar.self) { passwordChars in
                        CCKeyDerivationPBKDF(
                            CCPBKDFAlgorithm(kCCPBKDF2), passwordChars.baseAddress, password.count, saltBytes,
                            salt.count, CCPseudoRandomAlgorithm(kCCPRFHmacAlgSHA256), UInt32(iterations), &output,
                            outputByteCount)
                    }
                }
                guard status == Int32(kCCSuccess) else { throw .backend("CCKeyDerivationPBKDF") }
            #endif
            return output
        }
    }
}
