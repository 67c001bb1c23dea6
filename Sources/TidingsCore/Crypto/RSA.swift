extension TidingsCrypto {
    /// `TidingsCrypto.RSA` is public-key encryption with RSA keys of 2048 to 4096 bits.
    ///
    /// Tidings needs it for the Nextcloud push proxy: the app registers a 2048-bit public key as PEM
    /// and decrypts each notification's 256-byte `subject` with OAEP(SHA-1), falling back to PKCS#1 v1.5.
    /// PKCS#1 v1.5 rejects bad padding implicitly (see ``PrivateKey/decrypt(_:padding:)``), so the
    /// fallback is decided by whether the plaintext is valid JSON, never by a padding error.
    /// For example:
    ///
    /// ```swift
    /// let device = try RSA.PrivateKey()                       // 2048 bits
    /// register(devicePublicKey: device.publicKey.pemRepresentation)
    /// let plain = try device.decrypt(subjectBytes, padding: .oaepSHA1)
    /// ```
    public enum RSA {
        /// The padding schemes Tidings speaks.
        public enum Padding: Sendable, Hashable {
            /// RSAES-OAEP with SHA-1 for both the label hash and MGF1 (RFC 8017 §7.1).
            case oaepSHA1
            /// RSAES-PKCS1-v1_5 (RFC 8017 §7.2), only for servers that still use it; decryption rejects
            /// invalid padding implicitly instead of failing.
            case pkcs1v15

            /// How many plaintext bytes fit in one block of a `modulusByteCount`-byte key.
            public func maximumPlaintextByteCount(modulusByteCount: Int) -> Int {
                switch self {
                case .oaepSHA1: modulusByteCount - 2 * 20 - 2
                case .pkcs1v15: modulusByteCount - 11
                }
            }
        }

        /// Key sizes accepted for generation and import.
        public static let allowedBitCounts: ClosedRange<Int> = 2048...4096

        /// An RSA private key. Its `description` and its mirror never show key material.
        public struct PrivateKey: Sendable, CustomStringConvertible, CustomReflectable {
            let handle: RSAKeyHandle
            /// The matching public key.
            public let publicKey: PublicKey
            /// The key as unencrypted PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
            ///
            /// - Warning: Secret. Store it only where the app keeps secrets.
            public let pemRepresentation: String

            /// Generates a fresh key pair.
            ///
            /// - Parameter bitCount: 2048 (the default, what Nextcloud expects) up to 4096.
            /// - Throws: `CryptoError.invalidInput` for other sizes, `.backend` if the platform library fails.
            public init(bitCount: Int = 2048) throws(CryptoError) {
                guard allowedBitCounts.contains(bitCount), bitCount % 8 == 0 else {
                    throw .invalidInput("RSA key size \(bitCount) bits; allowed 2048...4096 in whole bytes")
                }
                try self.init(handle: RSABackend.generate(bitCount: bitCount))
            }

            /// Imports a PEM private key: PKCS#8 (`PRIVATE KEY`) or PKCS#1 (`TidingsCrypto.RSA PRIVATE KEY`).
            ///
            /// - Throws: `CryptoError.invalidKey` when the text holds no readable unencrypted RSA private
            ///   key of 2048 to 4096 bits.
            public init(pemRepresentation: String) throws(CryptoError) {
                try self.init(handle: RSABackend.importPrivate(pem: pemRepresentation))
            }

            private init(handle: RSAKeyHandle) throws(CryptoError) {
                try RSABackend.checkSize(handle)
                self.handle = handle
                self.pemRepresentation = try RSABackend.exportPrivatePEM(handle)
                self.publicKey = try PublicKey(handle: RSABackend.publicHandle(of: handle))
            }

            /// The modulus size in bits.
            public var bitCount: Int { publicKey.bitCount }

            /// Decrypts one block made with `padding` for this key.
            ///
            /// With `.pkcs1v15` a block whose padding is invalid (wrong key, wrong padding, garbage) does
            /// not throw: it decrypts to a synthetic message, pseudo-random but the same each time for
            /// the same key and block (implicit rejection, as OpenSSL 3.2 and later do), so neither the
            /// result nor its timing tells an attacker whether the padding was valid. Callers decide by
            /// the content: a Nextcloud push subject that is not the expected JSON is dropped silently,
            /// exactly like a real message that fails to parse.
            ///
            /// - Throws: `CryptoError.invalidInput` unless the block is exactly the modulus size;
            ///   `.decryptionFailure` for an `.oaepSHA1` block that does not decrypt, and for a block not
            ///   below the modulus (a fact about public values only).
            public func decrypt(_ ciphertext: [UInt8], padding: Padding) throws(CryptoError) -> [UInt8] {
                guard ciphertext.count == bitCount / 8 else {
                    throw .invalidInput("RSA block of \(ciphertext.count) bytes for a \(bitCount / 8)-byte key")
                }
                return try RSABackend.decrypt(ciphertext, key: handle, padding: padding)
            }

            public var description: String { "RSA.PrivateKey(\(bitCount) bits, redacted)" }
            /// Shows the size and public key only, so `dump(_:)` cannot print ``pemRepresentation``.
            public var customMirror: Mirror {
                Mirror(self, children: ["bitCount": bitCount, "publicKey": publicKey], displayStyle: .struct)
            }
        }

        /// An RSA public key.
        public struct PublicKey: Sendable, CustomStringConvertible {
            let handle: RSAKeyHandle
            /// The key as SubjectPublicKeyInfo PEM (`-----BEGIN PUBLIC KEY-----`).
            public let pemRepresentation: String
            /// The modulus size in bits.
            public let bitCount: Int

            /// Imports a SubjectPublicKeyInfo PEM (`-----BEGIN PUBLIC KEY-----`).
            ///
            /// - Throws: `CryptoError.invalidKey` unless it holds an RSA key of 2048 to 4096 bits.
            public init(pemRepresentation: String) throws(CryptoError) {
                try self.init(handle: RSABackend.importPublic(pem: pemRepresentation))
            }

            init(handle: RSAKeyHandle) throws(CryptoError) {
                try RSABackend.checkSize(handle)
                self.handle = handle
                self.bitCount = RSABackend.bitCount(handle)
                self.pemRepresentation = try RSABackend.exportPublicPEM(handle)
            }

            /// Encrypts one block (randomised: the same plaintext gives a different block each time).
            ///
            /// - Throws: `CryptoError.invalidInput` when the plaintext is longer than
            ///   ``Padding/maximumPlaintextByteCount(modulusByteCount:)``; `.backend`.
            public func encrypt(_ plaintext: [UInt8], padding: Padding) throws(CryptoError) -> [UInt8] {
                let limit = padding.maximumPlaintextByteCount(modulusByteCount: bitCount / 8)
                guard plaintext.count <= limit else {
                    throw .invalidInput(
                        "RSA plaintext of \(plaintext.count) bytes; at most \(limit) fit with \(padding)")
                }
                return try RSABackend.encrypt(plaintext, key: handle, padding: padding)
            }

            public var description: String { "RSA.PublicKey(\(bitCount) bits)" }
        }
    }
}
