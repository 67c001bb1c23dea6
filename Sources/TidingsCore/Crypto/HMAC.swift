#if TIDINGS_OPENSSL
    import COpenSSL
#else
    import CryptoKit
#endif

extension TidingsCrypto {
    /// `TidingsCrypto.HMACSHA256` is the keyed message authentication code HMAC (RFC 2104) over SHA-256.
    ///
    /// For example:
    ///
    /// ```swift
    /// let mac = HMACSHA256.authenticationCode(for: Array("payload".utf8), key: secret)
    /// let ok = HMACSHA256.isValidAuthenticationCode(mac, for: Array("payload".utf8), key: secret)
    /// ```
    public enum HMACSHA256 {
        /// The size of a code in bytes.
        public static let byteCount = 32

        /// Returns the 32-byte HMAC-SHA256 of `message` under `key` (a key of any length, even empty).
        public static func authenticationCode(for message: [UInt8], key: [UInt8]) -> [UInt8] {
            #if TIDINGS_OPENSSL
                var code = [UInt8](repeating: 0, count: byteCount)
                var length = 0
                // A one-byte buffer stands in for an empty key or message: OpenSSL wants non-null pointers.
                let keyBytes = key.isEmpty ? [0] : key
                let messageBytes = message.isEmpty ? [0] : message
                let result = EVP_Q_mac(
                    nil, "HMAC", nil, "SHA256", nil, keyBytes, key.count, messageBytes, message.count, &code, byteCount,
                    &length)
                guard result != nil, length == byteCount else {
                    // Only allocation failure can get here: HMAC-SHA256 is built in and takes any key and
                    // message, so nothing from network, disk or user reaches this line. Swift itself stops
                    // the process when it cannot allocate, so the API stays non-throwing (like CryptoKit's)
                    // and stops the same way, as `openSSLDigest` does. A pure-Swift fallback would still
                    // need SHA-256 from the same library, which fails under the same condition.
                    fatalError("OpenSSL could not allocate memory for HMAC-SHA256")
                }
                return code
            #else
                Array(
                    CryptoKit.HMAC<CryptoKit.SHA256>.authenticationCode(
                        for: message, using: CryptoKit.SymmetricKey(data: key)))
            #endif
        }

        /// Checks `code` against the HMAC of `message` in constant time.
        public static func isValidAuthenticationCode(_ code: [UInt8], for message: [UInt8], key: [UInt8]) -> Bool {
            constantTimeEqual(code, authenticationCode(for: message, key: key))
        }
    }
}
