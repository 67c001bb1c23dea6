import COpenSSL
import Foundation

/// https://developer.apple.com/documentation/cryptokit/p256
@available(iOS 13.0, macOS 10.15, watchOS 6.0, tvOS 13.0, *)
public enum P256 {
    /// https://developer.apple.com/documentation/cryptokit/p256/keyagreement
    public enum KeyAgreement {
        /// https://developer.apple.com/documentation/cryptokit/p256/keyagreement/privatekey
        public struct PrivateKey: Sendable {
            let scalar: [UInt8]
            /// https://developer.apple.com/documentation/cryptokit/p256/keyagreement/privatekey/publickey
            public let publicKey: P256.KeyAgreement.PublicKey

            /// https://developer.apple.com/documentation/cryptokit/p256/keyagreement/privatekey/init(rawrepresentation:)
            public init<Bytes: ContiguousBytes>(rawRepresentation: Bytes) throws {
                scalar = rawRepresentation.withUnsafeBytes { Array($0) }
                publicKey = P256.KeyAgreement.PublicKey(point: try Curve.publicPoint(forScalar: scalar))
            }

            /// https://developer.apple.com/documentation/cryptokit/p256/keyagreement/privatekey/sharedsecretfromkeyagreement(with:)
            public func sharedSecretFromKeyAgreement(with publicKeyShare: P256.KeyAgreement.PublicKey) throws
                -> SharedSecret
            {
                SharedSecret(bytes: try Curve.sharedSecret(scalar: scalar, peer: publicKeyShare.point))
            }
        }

        /// https://developer.apple.com/documentation/cryptokit/p256/keyagreement/publickey
        public struct PublicKey: Sendable {
            let point: [UInt8]

            init(point: [UInt8]) { self.point = point }

            /// https://developer.apple.com/documentation/cryptokit/p256/keyagreement/publickey/init(x963representation:)
            public init<Bytes: ContiguousBytes>(x963Representation: Bytes) throws {
                point = x963Representation.withUnsafeBytes { Array($0) }
                try Curve.validate(point)
            }

            /// https://developer.apple.com/documentation/cryptokit/p256/keyagreement/publickey/x963representation
            public var x963Representation: Data { Data(point) }
        }
    }

    /// https://developer.apple.com/documentation/cryptokit/p256/signing
    public enum Signing {
        /// https://developer.apple.com/documentation/cryptokit/p256/signing/privatekey
        public struct PrivateKey: Sendable {
            let scalar: [UInt8]
            let point: [UInt8]

            /// https://developer.apple.com/documentation/cryptokit/p256/signing/privatekey/init(rawrepresentation:)
            public init<Bytes: ContiguousBytes>(rawRepresentation: Bytes) throws {
                scalar = rawRepresentation.withUnsafeBytes { Array($0) }
                point = try Curve.publicPoint(forScalar: scalar)
            }

            /// https://developer.apple.com/documentation/cryptokit/p256/signing/privatekey/signature(for:)-6ynbv
            public func signature<D: DataProtocol>(for data: D) throws -> P256.Signing.ECDSASignature {
                try P256.Signing.ECDSASignature(
                    rawRepresentation: Curve.sign([UInt8](data), scalar: scalar, point: point))
            }
        }

        /// https://developer.apple.com/documentation/cryptokit/p256/signing/publickey
        public struct PublicKey: Sendable {
            let point: [UInt8]

            /// https://developer.apple.com/documentation/cryptokit/p256/signing/publickey/init(x963representation:)
            public init<Bytes: ContiguousBytes>(x963Representation: Bytes) throws {
                point = x963Representation.withUnsafeBytes { Array($0) }
                try Curve.validate(point)
            }

            /// https://developer.apple.com/documentation/cryptokit/p256/signing/publickey/isvalidsignature(_:for:)-7jdfb
            public func isValidSignature<D: DataProtocol>(_ signature: P256.Signing.ECDSASignature, for data: D) -> Bool
            {
                Curve.verify(signature.raw, message: [UInt8](data), point: point)
            }
        }

        /// https://developer.apple.com/documentation/cryptokit/p256/signing/ecdsasignature
        public struct ECDSASignature: Sendable {
            let raw: [UInt8]

            /// https://developer.apple.com/documentation/cryptokit/p256/signing/ecdsasignature/init(rawrepresentation:)
            public init<D: DataProtocol>(rawRepresentation: D) throws {
                guard rawRepresentation.count == 64 else { throw CryptoKitError.incorrectParameterSize }
                raw = [UInt8](rawRepresentation)
            }

            /// https://developer.apple.com/documentation/cryptokit/p256/signing/ecdsasignature/rawrepresentation
            public var rawRepresentation: Data { Data(raw) }
        }
    }
}

/// P-256 over OpenSSL (the same calls as TidingsCore's OpenSSL branch; not Apple API).
private enum Curve {
    static let failure = CryptoKitError.underlyingCoreCryptoError(error: -1)

    static func withGroup<T>(_ body: (_ group: OpaquePointer, _ bnContext: OpaquePointer) throws -> T) throws -> T {
        guard let group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1) else { throw failure }
        defer { EC_GROUP_free(group) }
        guard let bnContext = BN_CTX_new() else { throw failure }
        defer { BN_CTX_free(bnContext) }
        return try body(group, bnContext)
    }

    static func publicPoint(forScalar scalar: [UInt8]) throws -> [UInt8] {
        guard scalar.count == 32 else { throw CryptoKitError.incorrectKeySize }
        return try withGroup { group, bnContext in
            guard let d = BN_bin2bn(scalar, 32, nil) else { throw failure }
            defer { BN_clear_free(d) }
            guard let order = EC_GROUP_get0_order(group), BN_is_zero(d) == 0, BN_cmp(d, order) < 0 else {
                throw failure
            }
            guard let point = EC_POINT_new(group) else { throw failure }
            defer { EC_POINT_free(point) }
            guard EC_POINT_mul(group, point, d, nil, nil, bnContext) == 1 else { throw failure }
            var encoded = [UInt8](repeating: 0, count: 65)
            guard EC_POINT_point2oct(group, point, POINT_CONVERSION_UNCOMPRESSED, &encoded, 65, bnContext) == 65 else {
                throw failure
            }
            return encoded
        }
    }

    static func decode(_ encoded: [UInt8], group: OpaquePointer, bnContext: OpaquePointer) throws -> OpaquePointer {
        guard encoded.count == 65, encoded.first == 0x04, let point = EC_POINT_new(group) else { throw failure }
        guard EC_POINT_oct2point(group, point, encoded, encoded.count, bnContext) == 1,
            EC_POINT_is_on_curve(group, point, bnContext) == 1, EC_POINT_is_at_infinity(group, point) == 0
        else {
            EC_POINT_free(point)
            ERR_clear_error()
            throw failure
        }
        return point
    }

    static func validate(_ encoded: [UInt8]) throws {
        try withGroup { group, bnContext in EC_POINT_free(try decode(encoded, group: group, bnContext: bnContext)) }
    }

    static func sharedSecret(scalar: [UInt8], peer: [UInt8]) throws -> [UInt8] {
        try withGroup { group, bnContext in
            let peerPoint = try decode(peer, group: group, bnContext: bnContext)
            defer { EC_POINT_free(peerPoint) }
            guard let d = BN_bin2bn(scalar, 32, nil) else { throw failure }
            defer { BN_clear_free(d) }
            guard let product = EC_POINT_new(group) else { throw failure }
            defer { EC_POINT_clear_free(product) }
            guard let x = BN_new() else { throw failure }
            defer { BN_clear_free(x) }
            guard EC_POINT_mul(group, product, nil, peerPoint, d, bnContext) == 1,
                EC_POINT_is_at_infinity(group, product) == 0,
                EC_POINT_get_affine_coordinates(group, product, x, nil, bnContext) == 1
            else { throw failure }
            var secret = [UInt8](repeating: 0, count: 32)
            guard BN_bn2binpad(x, &secret, 32) == 32 else { throw failure }
            return secret
        }
    }

    static func makeKey(scalar: [UInt8]?, point: [UInt8]) throws -> OpaquePointer {
        guard let builder = OSSL_PARAM_BLD_new() else { throw failure }
        defer { OSSL_PARAM_BLD_free(builder) }
        var privateScalar: OpaquePointer?
        defer { BN_clear_free(privateScalar) }
        if let scalar {
            privateScalar = BN_bin2bn(scalar, Int32(scalar.count), nil)
            guard let privateScalar, OSSL_PARAM_BLD_push_BN(builder, copenssl_param_private_key(), privateScalar) == 1
            else { throw failure }
        }
        let built: UnsafeMutablePointer<OSSL_PARAM>? = point.withUnsafeBytes { bytes in
            guard
                OSSL_PARAM_BLD_push_utf8_string(builder, copenssl_param_group_name(), copenssl_group_p256(), 0) == 1,
                OSSL_PARAM_BLD_push_octet_string(builder, copenssl_param_public_key(), bytes.baseAddress, bytes.count)
                    == 1
            else { return nil }
            return OSSL_PARAM_BLD_to_param(builder)
        }
        guard let params = built else { throw failure }
        defer { OSSL_PARAM_free(params) }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw failure }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        let selection = scalar == nil ? copenssl_selection_public_key() : copenssl_selection_keypair()
        guard EVP_PKEY_fromdata_init(context) == 1, EVP_PKEY_fromdata(context, &key, selection, params) == 1, let key
        else { throw failure }
        return key
    }

    static func sign(_ message: [UInt8], scalar: [UInt8], point: [UInt8]) throws -> [UInt8] {
        let key = try makeKey(scalar: scalar, point: point)
        defer { EVP_PKEY_free(key) }
        guard let context = EVP_MD_CTX_new() else { throw failure }
        defer { EVP_MD_CTX_free(context) }
        var length = 0
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1,
            EVP_DigestSign(context, nil, &length, message, message.count) == 1
        else { throw failure }
        var der = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &der, &length, message, message.count) == 1 else { throw failure }
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, length)
        }
        guard let parsed else { throw failure }
        defer { ECDSA_SIG_free(parsed) }
        guard let r = ECDSA_SIG_get0_r(parsed), let s = ECDSA_SIG_get0_s(parsed) else { throw failure }
        var raw = [UInt8](repeating: 0, count: 64)
        let written = raw.withUnsafeMutableBufferPointer { buffer in
            BN_bn2binpad(r, buffer.baseAddress, 32) + BN_bn2binpad(s, buffer.baseAddress! + 32, 32)
        }
        guard written == 64 else { throw failure }
        return raw
    }

    static func verify(_ signature: [UInt8], message: [UInt8], point: [UInt8]) -> Bool {
        guard let key = try? makeKey(scalar: nil, point: point) else { return false }
        defer { EVP_PKEY_free(key) }
        guard let parsed = ECDSA_SIG_new() else { return false }
        defer { ECDSA_SIG_free(parsed) }
        guard let r = BN_bin2bn(signature, 32, nil) else { return false }
        guard let s = signature.withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress! + 32, 32, nil) }) else {
            BN_free(r)
            return false
        }
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
            ERR_clear_error()
            return false
        }
        let result = EVP_DigestVerify(context, derPointer, Int(derLength), message, message.count)
        ERR_clear_error()
        return result == 1
    }
}
