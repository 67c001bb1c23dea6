extension TidingsCrypto {
    /// A `TidingsCrypto.SymmetricKey` is secret key material for AES: 16 bytes (AES-128) or 32 bytes (AES-256).
    ///
    /// Its `description` and its mirror never show the key bytes, so a key that ends up in a log line or
    /// in `dump(_:)` output leaks nothing.
    /// For example:
    ///
    /// ```swift
    /// let key = SymmetricKey.random()                        // 256 bits
    /// let box = try AESGCM.sealCombined(Array("hi".utf8), key: key)
    /// ```
    public struct SymmetricKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
        CustomReflectable
    {
        /// The raw key bytes.
        ///
        /// - Warning: Secret. Store them only where the app keeps secrets (e.g. the Keychain).
        public let bytes: [UInt8]

        /// Wraps existing key bytes.
        ///
        /// - Throws: `CryptoError.invalidKeySize` unless `bytes` has 16 or 32 bytes.
        public init(bytes: [UInt8]) throws(CryptoError) {
            guard bytes.count == 16 || bytes.count == 32 else { throw .invalidKeySize(bytes.count) }
            self.bytes = bytes
        }

        /// A fresh key from the system's secure random source.
        ///
        /// - Parameter bitCount: 128 or 256; any other value gives a 256-bit key, the safer choice.
        public static func random(bitCount: Int = 256) -> TidingsCrypto.SymmetricKey {
            TidingsCrypto.SymmetricKey(unchecked: TidingsCrypto.SecureRandom.bytes(bitCount == 128 ? 16 : 32))
        }

        /// The size of the key in bits (128 or 256).
        public var bitCount: Int { bytes.count * 8 }

        init(unchecked bytes: [UInt8]) { self.bytes = bytes }

        /// Compares in constant time, so equality checks leak nothing about where keys differ.
        public static func == (lhs: TidingsCrypto.SymmetricKey, rhs: TidingsCrypto.SymmetricKey) -> Bool {
            constantTimeEqual(lhs.bytes, rhs.bytes)
        }

        public var description: String { "SymmetricKey(\(bitCount) bits, redacted)" }
        public var debugDescription: String { description }
        /// Shows the size only: `dump(_:)` and reflection-based loggers would otherwise print `bytes`.
        public var customMirror: Mirror { Mirror(self, children: ["bitCount": bitCount], displayStyle: .struct) }
    }
}

/// Compares two byte arrays in time that depends only on their lengths.
func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
    guard lhs.count == rhs.count else { return false }
    var difference: UInt8 = 0
    for index in lhs.indices { difference |= lhs[index] ^ rhs[index] }
    return difference == 0
}
