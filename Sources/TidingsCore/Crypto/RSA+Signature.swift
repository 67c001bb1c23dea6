extension TidingsCrypto.RSA.PrivateKey {
    /// Signs `message` with RSASSA-PKCS1-v1_5 over SHA-512 (RFC 8017 §8.2), the signature a
    /// Nextcloud server puts on each push (`openssl_sign(…, OPENSSL_ALGO_SHA512)`).
    ///
    /// Deterministic: the same key and message give the same signature, exactly the modulus size long.
    ///
    /// - Throws: `CryptoError.backend` if the platform library fails.
    public func signatureSHA512PKCS1(for message: [UInt8]) throws(CryptoError) -> [UInt8] {
        try RSABackend.signSHA512PKCS1(message, key: handle)
    }
}

extension TidingsCrypto.RSA.PublicKey {
    /// Whether `signature` is a valid RSASSA-PKCS1-v1_5 SHA-512 signature of `message` by this key.
    ///
    /// Never throws: a signature of the wrong length, made by another key or over other bytes is
    /// simply `false`, so callers treat every forgery the same way.
    public func isValidSignatureSHA512PKCS1(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        guard signature.count == bitCount / 8 else { return false }
        return RSABackend.verifySHA512PKCS1(signature, message: message, key: handle)
    }
}
