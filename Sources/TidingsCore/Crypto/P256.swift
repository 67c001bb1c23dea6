#if TIDINGS_OPENSSL
    import COpenSSL
#else
    import CryptoKit
#endif

extension TidingsCrypto {
    /// `TidingsCrypto.P256` groups operations on the NIST P-256 curve (secp256r1, prime256v1).
    public enum P256 {
        /// Elliptic-curve Diffie-Hellman (ECDH) on P-256, as Web Push (RFC 8291) uses it.
        ///
        /// For example:
        ///
        /// ```swift
        /// let mine = try P256.KeyAgreement.PrivateKey()
        /// let theirs = try P256.KeyAgreement.PublicKey(x963Representation: serverKeyBytes)
        /// let secret = try mine.sharedSecretFromKeyAgreement(with: theirs)    // 32 bytes
        /// ```
        public enum KeyAgreement {
            /// A P-256 private key (a scalar `1 ≤ d < n`).
            ///
            /// Its `description` and its mirror never show the scalar.
            public struct PrivateKey: Sendable, CustomStringConvertible, CustomReflectable {
                /// The 32-byte big-endian private scalar.
                ///
                /// - Warning: Secret. Store it only where the app keeps secrets.
                public let rawRepresentation: [UInt8]
                /// The matching public key.
                public let publicKey: PublicKey

                /// Generates a fresh key pair from the secure random source.
                ///
                /// - Throws: `CryptoError.backend` if the platform library fails.
                public init() throws(CryptoError) {
                    // Rejection sampling: a uniformly random 256-bit string is a valid scalar with
                    // probability 1 - 2^-32, so this loop practically always ends on the first draw.
                    for _ in 0..<64 {
                        if let key = try? PrivateKey(rawRepresentation: TidingsCrypto.SecureRandom.bytes(32)) {
                            self = key
                            return
                        }
                    }
                    throw .backend("P-256 key generation found no valid scalar")
                }

                /// Imports a 32-byte big-endian private scalar and derives its public key.
                ///
                /// - Throws: `CryptoError.invalidKey` unless the bytes are 32 long and `1 ≤ d < n`.
                public init(rawRepresentation: [UInt8]) throws(CryptoError) {
                    guard rawRepresentation.count == 32 else {
                        throw .invalidKey("P-256 private key must be 32 bytes, got \(rawRepresentation.count)")
                    }
                    let publicBytes = try P256Backend.publicPoint(forScalar: rawRepresentation)
                    self.rawRepresentation = rawRepresentation
                    self.publicKey = PublicKey(validated: publicBytes)
                }

                /// Computes the ECDH shared secret with `publicKeyShare`: the 32-byte x coordinate of d·Q.
                ///
                /// - Throws: `CryptoError.backend` if the platform library fails.
                public func sharedSecretFromKeyAgreement(with publicKeyShare: PublicKey) throws(CryptoError) -> [UInt8]
                {
                    try P256Backend.sharedSecret(scalar: rawRepresentation, peer: publicKeyShare.x963Representation)
                }

                public var description: String { "P256.KeyAgreement.PrivateKey(redacted)" }
                /// Shows the public key only, so `dump(_:)` cannot print the scalar.
                public var customMirror: Mirror {
                    Mirror(self, children: ["publicKey": publicKey], displayStyle: .struct)
                }
            }

            /// A P-256 public key: a point on the curve, not the point at infinity.
            public struct PublicKey: Sendable, Hashable {
                /// The 65-byte uncompressed ANSI X9.63 encoding: `0x04 ‖ x ‖ y`.
                public let x963Representation: [UInt8]

                /// Imports an uncompressed X9.63 point.
                ///
                /// - Throws: `CryptoError.invalidKey` unless the bytes are 65 long, start with `0x04` and
                ///   name a point on the curve.
                public init(x963Representation: [UInt8]) throws(CryptoError) {
                    guard x963Representation.count == 65, x963Representation.first == 0x04 else {
                        throw .invalidKey(
                            "P-256 public key must be a 65-byte uncompressed point, got \(x963Representation.count) bytes"
                        )
                    }
                    try P256Backend.validatePoint(x963Representation)
                    self.x963Representation = x963Representation
                }

                init(validated bytes: [UInt8]) { x963Representation = bytes }
            }
        }
    }
}

extension TidingsCrypto.P256.KeyAgreement.PrivateKey {
    /// ECDH with a peer point still in its 65-byte X9.63 form: validated and multiplied in one step, so a
    /// caller that receives the point from the wire (a Web Push message's sender key) sets the curve up once,
    /// not once to validate and again to multiply.
    ///
    /// - Throws: `CryptoError.invalidKey` unless the bytes are an uncompressed point on the curve;
    ///   `.backend` if the platform library fails.
    package func sharedSecretFromKeyAgreement(withX963Representation peer: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard peer.count == 65, peer.first == 0x04 else {
            throw .invalidKey("P-256 public key must be a 65-byte uncompressed point, got \(peer.count) bytes")
        }
        #if TIDINGS_OPENSSL
            return try P256Backend.sharedSecret(scalar: rawRepresentation, peer: peer)
        #else
            return try sharedSecretFromKeyAgreement(
                with: TidingsCrypto.P256.KeyAgreement.PublicKey(x963Representation: peer))
        #endif
    }
}

#if TIDINGS_OPENSSL
    private enum P256Backend {
        /// Runs `body` with the P-256 group and a scratch BN context, freeing both afterwards.
        static func withGroup<T>(
            _ body: (_ group: OpaquePointer, _ bnContext: OpaquePointer) throws(CryptoError) -> T
        ) throws(CryptoError) -> T {
            guard let group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1) else {
                throw .backend("EC_GROUP_new_by_curve_name(P-256)")
            }
            defer { EC_GROUP_free(group) }
            guard let bnContext = BN_CTX_new() else { throw .backend("BN_CTX_new") }
            defer { BN_CTX_free(bnContext) }
            return try body(group, bnContext)
        }

        static func publicPoint(forScalar scalar: [UInt8]) throws(CryptoError) -> [UInt8] {
            try withGroup { group, bnContext throws(CryptoError) in
                guard let d = BN_bin2bn(scalar, 32, nil) else { throw .backend("BN_bin2bn") }
                defer { BN_clear_free(d) }
                guard let order = EC_GROUP_get0_order(group) else { throw .backend("EC_GROUP_get0_order") }
                guard BN_is_zero(d) == 0, BN_cmp(d, order) < 0 else {
                    throw .invalidKey("P-256 private scalar must be in 1..<n")
                }
                guard let point = EC_POINT_new(group) else { throw .backend("EC_POINT_new") }
                defer { EC_POINT_free(point) }
                guard EC_POINT_mul(group, point, d, nil, nil, bnContext) == 1 else { throw .backend("EC_POINT_mul") }
                var encoded = [UInt8](repeating: 0, count: 65)
                let written = EC_POINT_point2oct(group, point, POINT_CONVERSION_UNCOMPRESSED, &encoded, 65, bnContext)
                guard written == 65 else { throw .backend("EC_POINT_point2oct") }
                return encoded
            }
        }

        static func validatePoint(_ encoded: [UInt8]) throws(CryptoError) {
            try withGroup { group, bnContext throws(CryptoError) in
                guard let point = EC_POINT_new(group) else { throw .backend("EC_POINT_new") }
                defer { EC_POINT_free(point) }
                guard EC_POINT_oct2point(group, point, encoded, encoded.count, bnContext) == 1,
                    EC_POINT_is_on_curve(group, point, bnContext) == 1,
                    EC_POINT_is_at_infinity(group, point) == 0
                else {
                    _ = drainOpenSSLErrors()
                    throw .invalidKey("P-256 public key is not a point on the curve")
                }
            }
        }

        /// d·Q's x coordinate, computed on the curve directly: one scalar multiplication (constant time on
        /// OpenSSL's P-256 implementations), where the EVP derive path also rebuilt both keys and re-checked
        /// the peer's order with a second multiplication — 4× the time for the same result on a curve with
        /// cofactor 1, whose on-curve check (`EC_POINT_oct2point` + `EC_POINT_is_on_curve`) already proves a
        /// point has order n.
        static func sharedSecret(scalar: [UInt8], peer: [UInt8]) throws(CryptoError) -> [UInt8] {
            try withGroup { group, bnContext throws(CryptoError) in
                guard let peerPoint = EC_POINT_new(group) else { throw .backend("EC_POINT_new") }
                defer { EC_POINT_free(peerPoint) }
                guard EC_POINT_oct2point(group, peerPoint, peer, peer.count, bnContext) == 1,
                    EC_POINT_is_on_curve(group, peerPoint, bnContext) == 1,
                    EC_POINT_is_at_infinity(group, peerPoint) == 0
                else {
                    _ = drainOpenSSLErrors()
                    throw .invalidKey("P-256 public key is not a point on the curve")
                }
                guard let d = BN_bin2bn(scalar, 32, nil) else { throw .backend("BN_bin2bn") }
                defer { BN_clear_free(d) }
                guard let product = EC_POINT_new(group) else { throw .backend("EC_POINT_new") }
                defer { EC_POINT_clear_free(product) }
                guard let x = BN_new() else { throw .backend("BN_new") }
                defer { BN_clear_free(x) }
                guard EC_POINT_mul(group, product, nil, peerPoint, d, bnContext) == 1,
                    EC_POINT_is_at_infinity(group, product) == 0,
                    EC_POINT_get_affine_coordinates(group, product, x, nil, bnContext) == 1
                else {
                    throw openSSLFailure("EC_POINT_mul(ECDH)")
                }
                var secret = [UInt8](repeating: 0, count: 32)
                guard BN_bn2binpad(x, &secret, 32) == 32 else { throw .backend("BN_bn2binpad") }
                return secret
            }
        }
    }
#else
    private enum P256Backend {
        static func publicPoint(forScalar scalar: [UInt8]) throws(CryptoError) -> [UInt8] {
            do {
                return [UInt8](
                    try CryptoKit.P256.KeyAgreement.PrivateKey(rawRepresentation: scalar).publicKey.x963Representation)
            } catch {
                throw .invalidKey("P-256 private scalar out of range")
            }
        }

        static func validatePoint(_ point: [UInt8]) throws(CryptoError) {
            do {
                _ = try CryptoKit.P256.KeyAgreement.PublicKey(x963Representation: point)
            } catch {
                throw .invalidKey("P-256 public key is not a point on the curve")
            }
        }

        static func sharedSecret(scalar: [UInt8], peer: [UInt8]) throws(CryptoError) -> [UInt8] {
            do {
                let key = try CryptoKit.P256.KeyAgreement.PrivateKey(rawRepresentation: scalar)
                let secret = try key.sharedSecretFromKeyAgreement(
                    with: CryptoKit.P256.KeyAgreement.PublicKey(x963Representation: peer))
                return secret.withUnsafeBytes { [UInt8]($0) }
            } catch {
                throw .backend("P256 key agreement: \(error)")
            }
        }
    }
#endif
