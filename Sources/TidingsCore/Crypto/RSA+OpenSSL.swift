#if TIDINGS_OPENSSL
    import COpenSSL

    /// Owns one OpenSSL `EVP_PKEY`. Keys are immutable after creation and OpenSSL allows concurrent
    /// use of one key from separate operation contexts, so sharing the handle across tasks is safe.
    final class RSAKeyHandle: @unchecked Sendable {
        let key: OpaquePointer

        init(key: OpaquePointer) { self.key = key }

        deinit { EVP_PKEY_free(key) }
    }

    enum RSABackend {
        static func generate(bitCount: Int) throws(CryptoError) -> RSAKeyHandle {
            guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else {
                throw openSSLFailure("EVP_PKEY_CTX_new_from_name(RSA)")
            }
            defer { EVP_PKEY_CTX_free(context) }
            var key: OpaquePointer?
            guard EVP_PKEY_keygen_init(context) == 1,
                EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(bitCount)) == 1,
                EVP_PKEY_generate(context, &key) == 1, let key
            else { throw openSSLFailure("EVP_PKEY_generate(RSA)") }
            return RSAKeyHandle(key: key)
        }

        static func bitCount(_ handle: RSAKeyHandle) -> Int { Int(EVP_PKEY_get_bits(handle.key)) }

        static func checkSize(_ handle: RSAKeyHandle) throws(CryptoError) {
            guard EVP_PKEY_get_base_id(handle.key) == NID_rsaEncryption else { throw .invalidKey("not an RSA key") }
            let bits = bitCount(handle)
            guard TidingsCrypto.RSA.allowedBitCounts.contains(bits) else {
                throw .invalidKey("RSA key of \(bits) bits; allowed 2048...4096")
            }
        }

        /// Reads one key from PEM text with `read`, never prompting for a passphrase.
        private static func importPEM(
            _ pem: String, kind: String,
            read: (_ bio: OpaquePointer) -> OpaquePointer?
        ) throws(CryptoError) -> RSAKeyHandle {
            let bytes = Array(pem.utf8)
            guard !bytes.isEmpty, bytes.count < Int(Int32.max) else { throw .invalidKey("empty \(kind) PEM") }
            let key: OpaquePointer? = bytes.withUnsafeBytes { buffer in
                guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
                defer { BIO_free(bio) }
                return read(bio)
            }
            guard let key else {
                _ = drainOpenSSLErrors()
                throw .invalidKey("no readable unencrypted RSA \(kind) in PEM")
            }
            let handle = RSAKeyHandle(key: key)
            guard EVP_PKEY_get_base_id(key) == NID_rsaEncryption else { throw .invalidKey("PEM holds a non-RSA key") }
            return handle
        }

        static func importPrivate(pem: String) throws(CryptoError) -> RSAKeyHandle {
            try importPEM(pem, kind: "private key") { bio in
                // The callback refuses: an encrypted key fails instead of prompting on the terminal.
                PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in -1 }, nil)
            }
        }

        static func importPublic(pem: String) throws(CryptoError) -> RSAKeyHandle {
            try importPEM(pem, kind: "public key") { bio in
                PEM_read_bio_PUBKEY(bio, nil, { _, _, _, _ in -1 }, nil)
            }
        }

        private static func exportPEM(_ write: (_ bio: OpaquePointer) -> Int32) throws(CryptoError) -> String {
            guard let bio = BIO_new(BIO_s_mem()) else { throw openSSLFailure("BIO_new") }
            defer { BIO_free(bio) }
            guard write(bio) == 1 else { throw openSSLFailure("PEM_write_bio") }
            var data: UnsafeMutablePointer<CChar>?
            let length = copenssl_bio_mem_data(bio, &data)
            guard let data, length > 0 else { throw openSSLFailure("BIO_get_mem_data") }
            return String(decoding: UnsafeRawBufferPointer(start: data, count: Int(length)), as: UTF8.self)
        }

        static func exportPrivatePEM(_ handle: RSAKeyHandle) throws(CryptoError) -> String {
            // PEM_write_bio_PrivateKey writes PKCS#8 ("BEGIN PRIVATE KEY"), unencrypted with a nil cipher.
            try exportPEM { bio in PEM_write_bio_PrivateKey(bio, handle.key, nil, nil, 0, nil, nil) }
        }

        static func exportPublicPEM(_ handle: RSAKeyHandle) throws(CryptoError) -> String {
            try exportPEM { bio in PEM_write_bio_PUBKEY(bio, handle.key) }
        }

        static func publicHandle(of handle: RSAKeyHandle) throws(CryptoError) -> RSAKeyHandle {
            // Round-tripping through SubjectPublicKeyInfo drops the private parts for good.
            try importPublic(pem: exportPublicPEM(handle))
        }

        /// Creates an operation context for `handle` configured for `padding`.
        private static func context(
            for handle: RSAKeyHandle, padding: TidingsCrypto.RSA.Padding, initialise: (OpaquePointer) -> Int32
        ) throws(CryptoError) -> OpaquePointer {
            guard let context = EVP_PKEY_CTX_new_from_pkey(nil, handle.key, nil) else {
                throw openSSLFailure("EVP_PKEY_CTX_new_from_pkey")
            }
            var configured = initialise(context) == 1
            switch padding {
            case .oaepSHA1:
                configured =
                    configured && EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_OAEP_PADDING) == 1
                    && EVP_PKEY_CTX_set_rsa_oaep_md(context, EVP_sha1()) == 1
                    && EVP_PKEY_CTX_set_rsa_mgf1_md(context, EVP_sha1()) == 1
            case .pkcs1v15:
                configured = configured && EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING) == 1
            }
            guard configured else {
                EVP_PKEY_CTX_free(context)
                throw openSSLFailure("EVP_PKEY_CTX_set_rsa_padding")
            }
            return context
        }

        static func encrypt(_ plaintext: [UInt8], key: RSAKeyHandle, padding: TidingsCrypto.RSA.Padding)
            throws(CryptoError)
            -> [UInt8]
        {
            let context = try context(for: key, padding: padding) { EVP_PKEY_encrypt_init($0) }
            defer { EVP_PKEY_CTX_free(context) }
            var length = Int(EVP_PKEY_get_size(key.key))
            var output = [UInt8](repeating: 0, count: length)
            let input = plaintext.isEmpty ? [0] : plaintext
            guard EVP_PKEY_encrypt(context, &output, &length, input, plaintext.count) == 1 else {
                throw openSSLFailure("EVP_PKEY_encrypt")
            }
            return Array(output.prefix(length))
        }

        static func decrypt(_ ciphertext: [UInt8], key: RSAKeyHandle, padding: TidingsCrypto.RSA.Padding)
            throws(CryptoError)
            -> [UInt8]
        {
            if padding == .pkcs1v15 && !hasNativeImplicitRejection {
                return try decryptRejectingImplicitly(ciphertext, key: key)
            }
            let context = try context(for: key, padding: padding) { EVP_PKEY_decrypt_init($0) }
            defer { EVP_PKEY_CTX_free(context) }
            if padding == .pkcs1v15 {
                // On by default since 3.2; asked for explicitly so that no configuration turns it off.
                guard copenssl_rsa_set_implicit_rejection(context, 1) == 1 else {
                    throw openSSLFailure("EVP_PKEY_CTX_set_params(implicit-rejection)")
                }
            }
            var length = Int(EVP_PKEY_get_size(key.key))
            var output = [UInt8](repeating: 0, count: length)
            guard EVP_PKEY_decrypt(context, &output, &length, ciphertext, ciphertext.count) == 1 else {
                _ = drainOpenSSLErrors()
                throw .decryptionFailure
            }
            return Array(output.prefix(length))
        }

        /// Whether this OpenSSL (3.2 or later) rejects invalid PKCS#1 v1.5 padding implicitly itself.
        static let hasNativeImplicitRejection = OpenSSL_version_num() >= 0x3020_0000

        /// PKCS#1 v1.5 decryption with implicit rejection done here, for OpenSSL before 3.2: a raw
        /// RSA decryption, then ``RSAImplicitRejection`` decodes the block exactly as OpenSSL 3.2 would.
        ///
        /// - Throws: `.decryptionFailure` only for a block not below the modulus, which depends on
        ///   public values alone.
        static func decryptRejectingImplicitly(_ ciphertext: [UInt8], key: RSAKeyHandle) throws(CryptoError)
            -> [UInt8]
        {
            let byteCount = Int(EVP_PKEY_get_size(key.key))
            guard ciphertext.count == byteCount else { throw .decryptionFailure }
            var encoded = try rawDecrypt(ciphertext, key: key, byteCount: byteCount)
            var exponent: [UInt8]
            do {
                exponent = try privateExponent(key, byteCount: byteCount)
            } catch {
                RSAImplicitRejection.wipe(&encoded)
                throw error
            }
            return RSAImplicitRejection.message(encoded: &encoded, privateExponent: &exponent, ciphertext: ciphertext)
        }

        /// `ciphertext^d mod n` as `byteCount` big-endian bytes (OpenSSL blinds it and runs in constant time).
        private static func rawDecrypt(_ ciphertext: [UInt8], key: RSAKeyHandle, byteCount: Int) throws(CryptoError)
            -> [UInt8]
        {
            guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.key, nil) else {
                throw openSSLFailure("EVP_PKEY_CTX_new_from_pkey")
            }
            defer { EVP_PKEY_CTX_free(context) }
            guard EVP_PKEY_decrypt_init(context) == 1,
                EVP_PKEY_CTX_set_rsa_padding(context, RSA_NO_PADDING) == 1
            else { throw openSSLFailure("EVP_PKEY_CTX_set_rsa_padding(none)") }
            var length = byteCount
            var output = [UInt8](repeating: 0, count: byteCount)
            guard EVP_PKEY_decrypt(context, &output, &length, ciphertext, ciphertext.count) == 1, length == byteCount
            else {
                // Only a block at or above the modulus gets here: public information, no oracle.
                _ = drainOpenSSLErrors()
                throw .decryptionFailure
            }
            return output
        }

        /// The private exponent `d`, big-endian and left-padded to `byteCount` bytes.
        static func privateExponent(_ key: RSAKeyHandle, byteCount: Int) throws(CryptoError) -> [UInt8] {
            var exponent: OpaquePointer?
            guard EVP_PKEY_get_bn_param(key.key, "d", &exponent) == 1, let exponent else {
                throw openSSLFailure("EVP_PKEY_get_bn_param(d)")
            }
            defer { BN_clear_free(exponent) }
            var bytes = [UInt8](repeating: 0, count: byteCount)
            guard BN_bn2binpad(exponent, &bytes, Int32(byteCount)) == Int32(byteCount) else {
                throw openSSLFailure("BN_bn2binpad(d)")
            }
            return bytes
        }
    }
#endif
