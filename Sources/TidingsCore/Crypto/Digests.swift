#if TIDINGS_OPENSSL
    import COpenSSL
#else
    import CryptoKit
#endif

extension TidingsCrypto {
    /// `TidingsCrypto.SHA256` is the SHA-256 hash function (FIPS 180-4).
    public enum SHA256 {
        /// The digest size in bytes.
        public static let byteCount = 32

        /// Returns the 32-byte SHA-256 digest of `data`.
        public static func hash(_ data: [UInt8]) -> [UInt8] {
            #if TIDINGS_OPENSSL
                openSSLDigest(data, algorithm: EVP_sha256(), byteCount: byteCount)
            #else
                Array(CryptoKit.SHA256.hash(data: data))
            #endif
        }
    }
}

extension TidingsCrypto {
    /// `TidingsCrypto.SHA512` is the SHA-512 hash function (FIPS 180-4).
    public enum SHA512 {
        /// The digest size in bytes.
        public static let byteCount = 64

        /// Returns the 64-byte SHA-512 digest of `data`.
        public static func hash(_ data: [UInt8]) -> [UInt8] {
            #if TIDINGS_OPENSSL
                openSSLDigest(data, algorithm: EVP_sha512(), byteCount: byteCount)
            #else
                Array(CryptoKit.SHA512.hash(data: data))
            #endif
        }
    }
}

extension TidingsCrypto {
    /// `TidingsCrypto.Insecure` holds algorithms that are broken for security and kept only for protocols that require them.
    public enum Insecure {
        /// `SHA1` is SHA-1, kept only because the WebSocket handshake (RFC 6455 §4.2.2) and
        /// RSA-OAEP as the Nextcloud push proxy uses it require it.
        ///
        /// - Warning: Never use it to protect anything: SHA-1 collisions are practical.
        public enum SHA1 {
            /// The digest size in bytes.
            public static let byteCount = 20

            /// Returns the 20-byte SHA-1 digest of `data`.
            public static func hash(_ data: [UInt8]) -> [UInt8] {
                #if TIDINGS_OPENSSL
                    openSSLDigest(data, algorithm: EVP_sha1(), byteCount: byteCount)
                #else
                    Array(CryptoKit.Insecure.SHA1.hash(data: data))
                #endif
            }
        }
    }
}

#if TIDINGS_OPENSSL
    /// One-shot digest through EVP.
    ///
    /// `EVP_Digest` over a built-in algorithm fails only when memory cannot be allocated. That is not
    /// input the caller controls, and Swift itself stops the process on allocation failure, so the
    /// digest API stays non-throwing and this one path stops the process the same way.
    func openSSLDigest(_ data: [UInt8], algorithm: OpaquePointer?, byteCount: Int) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: byteCount)
        var length: UInt32 = 0
        let status = data.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &digest, &length, algorithm, nil)
        }
        guard status == 1, Int(length) == byteCount else {
            fatalError("OpenSSL could not allocate memory for a digest")
        }
        return digest
    }
#endif
