#if TIDINGS_OPENSSL
    import COpenSSL
#else
    import CryptoKit
#endif

extension TidingsCrypto.P256 {
    /// ECDSA on P-256 with SHA-256 (ES256), as VAPID (RFC 8292) signs its JWTs. Signatures are the 64-byte raw
    /// form `r ‖ s` that JWS uses, not DER.
    public enum Signing {
        /// A signing key: a P-256 scalar. Its `description` never shows the scalar.
        public struct PrivateKey: Sendable, CustomStringConvertible, CustomReflectable {
            /// The 32-byte big-endian scalar.
            ///
            /// - Warning: Secret.
            public let rawRepresentation: [UInt8]
            /// The 65-byte uncompressed public key (`0x04 ‖ x ‖ y`).
            public let publicKey: PublicKey

            /// A fresh key from the secure random source.
            ///
            /// - Throws: `CryptoError.backend` if the platform library fails.
            public init() throws(CryptoError) {
                let agreement = try TidingsCrypto.P256.KeyAgreement.PrivateKey()
                rawRepresentation = agreement.rawRepresentation
                publicKey = PublicKey(validated: agreement.publicKey.x963Representation)
            }

            /// Imports a 32-byte scalar `1 ≤ d < n`.
            ///
            /// - Throws: `CryptoError.invalidKey` for any other bytes.
            public init(rawRepresentation: [UInt8]) throws(CryptoError) {
                let agreement = try TidingsCrypto.P256.KeyAgreement.PrivateKey(rawRepresentation: rawRepresentation)
                self.rawRepresentation = rawRepresentation
                publicKey = PublicKey(validated: agreement.publicKey.x963Representation)
            }

            /// The ES256 signature of `message` (hashed with SHA-256 here): 64 bytes, `r ‖ s`, each big-endian.
            /// A fresh random nonce each time, so two signatures of one message differ.
            ///
            /// - Throws: `CryptoError.backend` if the platform library fails.
            public func signature(for message: [UInt8]) throws(CryptoError) -> [UInt8] {
                try SigningBackend.sign(message, scalar: rawRepresentation, publicPoint: publicKey.x963Representation)
            }

            public var description: String { "P256.Signing.PrivateKey(redacted)" }
            /// Shows the public key only, so `dump(_:)` cannot print the scalar.
            public var customMirror: Mirror { Mirror(self, children: ["publicKey": publicKey], displayStyle: .struct) }
        }

        /// A verifying key: a point on P-256.
        public struct PublicKey: Sendable, Hashable {
            /// The 65-byte uncompressed X9.63 encoding.
            public let x963Representation: [UInt8]

            /// Imports an uncompressed point.
            ///
            /// - Throws: `CryptoError.invalidKey` unless the bytes are a 65-byte uncompressed point on the curve.
            public init(x963Representation: [UInt8]) throws(CryptoError) {
                self.x963Representation =
                    try TidingsCrypto.P256.KeyAgreement.PublicKey(x963Representation: x963Representation)
                    .x963Representation
            }

            init(validated bytes: [UInt8]) { x963Representation = bytes }

            /// Whether `signature` (64 bytes, `r ‖ s`) is this key's ES256 signature of `message`; false for
            /// anything malformed.
            public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
                guard signature.count == 64 else { return false }
                return SigningBackend.verify(signature, message: message, publicPoint: x963Representation)
            }
        }
    }
}

#if TIDINGS_OPENSSL
    private enum SigningBackend {
        /// An EVP_PKEY for P-256 from its public point and, for signing, its scalar.
        static func makeKey(scalar: [UInt8]?, publicPoint: [UInt8]) throws(CryptoError) -> OpaquePointer {
            guard let builder = OSSL_PARAM_BLD_new() else { throw .backend("OSSL_PARAM_BLD_new") }
            defer { OSSL_PARAM_BLD_free(builder) }
            var privateScalar: OpaquePointer?
            defer { BN_clear_free(privateScalar) }
            if let scalar {
                privateScalar = BN_bin2bn(scalar, Int32(scalar.count), nil)
                guard let privateScalar,
                    OSSL_PARAM_BLD_push_BN(builder, copenssl_param_private_key(), privateScalar) == 1
                else {
                    throw .backend("OSSL_PARAM_BLD_push_BN")
                }
            }
            // The builder keeps pointers to names and octets (not copies) until `to_param`: the names come from
            // C statics and the point stays pinned across the call.
            let built: UnsafeMutablePointer<OSSL_PARAM>? = publicPoint.withUnsafeBytes { point in
                guard
                    OSSL_PARAM_BLD_push_utf8_string(builder, copenssl_param_group_name(), copenssl_group_p256(), 0)
                        == 1,
                    OSSL_PARAM_BLD_push_octet_string(
                        builder, copenssl_param_public_key(), point.baseAddress, point.count)
                        == 1
                else { return nil }
                return OSSL_PARAM_BLD_to_param(builder)
            }
            guard let params = built else { throw openSSLFailure("OSSL_PARAM_BLD_to_param") }
            defer { OSSL_PARAM_free(params) }
            guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
                throw .backend("EVP_PKEY_CTX_new_from_name(EC)")
            }
            defer { EVP_PKEY_CTX_free(context) }
            var key: OpaquePointer?
            let selection = scalar == nil ? copenssl_selection_public_key() : copenssl_selection_keypair()
            guard EVP_PKEY_fromdata_init(context) == 1, EVP_PKEY_fromdata(context, &key, selection, params) == 1,
                let key
            else {
                throw openSSLFailure("EVP_PKEY_fromdata(EC)")
            }
            return key
        }

        static func sign(_ message: [UInt8], scalar: [UInt8], publicPoint: [UInt8]) throws(CryptoError) -> [UInt8] {
            let key = try makeKey(scalar: scalar, publicPoint: publicPoint)
            defer { EVP_PKEY_free(key) }
            guard let context = EVP_MD_CTX_new() else { throw .backend("EVP_MD_CTX_new") }
            defer { EVP_MD_CTX_free(context) }
            guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1 else {
                throw openSSLFailure("EVP_DigestSignInit")
            }
            var length = 0
            guard EVP_DigestSign(context, nil, &length, message, message.count) == 1 else {
                throw openSSLFailure("EVP_DigestSign(length)")
            }
            var der = [UInt8](repeating: 0, count: length)
            guard EVP_DigestSign(context, &der, &length, message, message.count) == 1 else {
                throw openSSLFailure("EVP_DigestSign")
            }
            // DER `SEQUENCE { r INTEGER, s INTEGER }` → fixed-width r ‖ s.
            let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
                var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
                return d2i_ECDSA_SIG(nil, &cursor, length)
            }
            guard let parsed else { throw openSSLFailure("d2i_ECDSA_SIG") }
            defer { ECDSA_SIG_free(parsed) }
            guard let r = ECDSA_SIG_get0_r(parsed), let s = ECDSA_SIG_get0_s(parsed) else {
                throw .backend("ECDSA_SIG_get0")
            }
            var raw = [UInt8](repeating: 0, count: 64)
            let written = raw.withUnsafeMutableBufferPointer { buffer in
                BN_bn2binpad(r, buffer.baseAddress, 32) + BN_bn2binpad(s, buffer.baseAddress! + 32, 32)
            }
            guard written == 64 else { throw .backend("BN_bn2binpad") }
            return raw
        }

        static func verify(_ signature: [UInt8], message: [UInt8], publicPoint: [UInt8]) -> Bool {
            guard let key = try? makeKey(scalar: nil, publicPoint: publicPoint) else { return false }
            defer { EVP_PKEY_free(key) }
            guard let parsed = ECDSA_SIG_new() else { return false }
            defer { ECDSA_SIG_free(parsed) }
            guard let r = BN_bin2bn(signature, 32, nil) else { return false }
            guard let s = signature.withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress! + 32, 32, nil) }) else {
                BN_free(r)
                return false
            }
            // set0 takes ownership of r and s.
            guard ECDSA_SIG_set0(parsed, r, s) == 1 else {
                BN_free(r)
                BN_free(s)
                return false
            }
            var derPointer: UnsafeMutablePointer<UInt8>?
            let derLength = i2d_ECDSA_SIG(parsed, &derPointer)
            guard derLength > 0, let derPointer else { return false }
            defer { CRYPTO_free(derPointer, #fileID, #line) }
            guard let context = EVP_MD_CTX_new() else { return false }
            defer { EVP_MD_CTX_free(context) }
            guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else {
                _ = drainOpenSSLErrors()
                return false
            }
            let result = EVP_DigestVerify(context, derPointer, Int(derLength), message, message.count)
            _ = drainOpenSSLErrors()
            return result == 1
        }
    }
#else
    private enum SigningBackend {
        static func sign(_ message: [UInt8], scalar: [UInt8], publicPoint: [UInt8]) throws(CryptoError) -> [UInt8] {
            do {
                let key = try CryptoKit.P256.Signing.PrivateKey(rawRepresentation: scalar)
                return [UInt8](try key.signature(for: message).rawRepresentation)
            } catch {
                throw .backend("P256.Signing: \(error)")
            }
        }

        static func verify(_ signature: [UInt8], message: [UInt8], publicPoint: [UInt8]) -> Bool {
            guard let key = try? CryptoKit.P256.Signing.PublicKey(x963Representation: publicPoint),
                let parsed = try? CryptoKit.P256.Signing.ECDSASignature(rawRepresentation: signature)
            else { return false }
            return key.isValidSignature(parsed, for: message)
        }
    }
#endif
