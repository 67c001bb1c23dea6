extension TidingsCrypto {
    /// `TidingsCrypto.HKDF` is the HMAC-based key derivation function of RFC 5869, over SHA-256.
    ///
    /// It turns input keying material (an ECDH shared secret, a password-derived key) into one or more
    /// keys bound to a context (`info`). For example:
    ///
    /// ```swift
    /// let okm = try TidingsCrypto.HKDF.deriveKey(inputKeyMaterial: secret, salt: salt, info: Array("Content-Encoding: aes128gcm\0".utf8), outputByteCount: 16)
    /// ```
    ///
    /// It is built on ``TidingsCrypto/HMACSHA256``, so it runs on OpenSSL or CryptoKit like the rest of the facade.
    public enum HKDF {
        /// The largest output RFC 5869 allows for SHA-256: 255 blocks of 32 bytes.
        public static let maximumOutputByteCount = 255 * TidingsCrypto.HMACSHA256.byteCount

        /// HKDF-Extract: a 32-byte pseudorandom key from `inputKeyMaterial` and `salt`
        /// (an empty salt means 32 zero bytes, as RFC 5869 §2.2 says).
        public static func extract(inputKeyMaterial: [UInt8], salt: [UInt8]) -> [UInt8] {
            let effectiveSalt = salt.isEmpty ? [UInt8](repeating: 0, count: TidingsCrypto.HMACSHA256.byteCount) : salt
            return TidingsCrypto.HMACSHA256.authenticationCode(for: inputKeyMaterial, key: effectiveSalt)
        }

        /// HKDF-Expand: `outputByteCount` bytes from a pseudorandom key and `info`.
        ///
        /// - Throws: `CryptoError.invalidInput` when `outputByteCount` is negative or above 8160, or when
        ///   `pseudoRandomKey` is shorter than 32 bytes (RFC 5869 §2.3).
        public static func expand(pseudoRandomKey: [UInt8], info: [UInt8], outputByteCount: Int) throws(CryptoError)
            -> [UInt8]
        {
            guard outputByteCount >= 0, outputByteCount <= maximumOutputByteCount else {
                throw .invalidInput("HKDF output of \(outputByteCount) bytes; allowed 0...\(maximumOutputByteCount)")
            }
            guard pseudoRandomKey.count >= TidingsCrypto.HMACSHA256.byteCount else {
                throw .invalidInput("HKDF pseudorandom key of \(pseudoRandomKey.count) bytes; needs at least 32")
            }
            var output: [UInt8] = []
            output.reserveCapacity(outputByteCount + TidingsCrypto.HMACSHA256.byteCount)
            var block: [UInt8] = []
            var counter: UInt8 = 1
            while output.count < outputByteCount {
                block = TidingsCrypto.HMACSHA256.authenticationCode(for: block + info + [counter], key: pseudoRandomKey)
                output += block
                counter &+= 1
            }
            return Array(output.prefix(outputByteCount))
        }

        /// Extract then expand: `outputByteCount` bytes of key material.
        ///
        /// - Throws: `CryptoError.invalidInput` when `outputByteCount` is negative or above 8160.
        public static func deriveKey(
            inputKeyMaterial: [UInt8], salt: [UInt8] = [], info: [UInt8] = [], outputByteCount: Int
        ) throws(CryptoError) -> [UInt8] {
            try expand(
                pseudoRandomKey: extract(inputKeyMaterial: inputKeyMaterial, salt: salt), info: info,
                outputByteCount: outputByteCount)
        }
    }
}
