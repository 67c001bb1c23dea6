#if TIDINGS_OPENSSL
    import COpenSSL

    extension RSABackend {
        /// One EVP digest-sign or digest-verify context for SHA-512 with PKCS#1 v1.5 padding.
        private static func digestContext(
            key: RSAKeyHandle, initialise: (OpaquePointer, UnsafeMutablePointer<OpaquePointer?>) -> Int32
        ) throws(CryptoError) -> OpaquePointer {
            guard let context = EVP_MD_CTX_new() else { throw openSSLFailure("EVP_MD_CTX_new") }
            var keyContext: OpaquePointer?
            guard initialise(context, &keyContext) == 1, let keyContext,
                EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PADDING) == 1
            else {
                EVP_MD_CTX_free(context)
                throw openSSLFailure("EVP_DigestSignInit/VerifyInit(SHA-512)")
            }
            return context
        }

        static func signSHA512PKCS1(_ message: [UInt8], key: RSAKeyHandle) throws(CryptoError) -> [UInt8] {
            let context = try digestContext(key: key) { context, keyContext in
                EVP_DigestSignInit(context, keyContext, EVP_sha512(), nil, key.key)
            }
            defer { EVP_MD_CTX_free(context) }
            var length = Int(EVP_PKEY_get_size(key.key))
            var signature = [UInt8](repeating: 0, count: length)
            let input = message.isEmpty ? [0] : message
            guard EVP_DigestSign(context, &signature, &length, input, message.count) == 1 else {
                throw openSSLFailure("EVP_DigestSign")
            }
            return Array(signature.prefix(length))
        }

        static func verifySHA512PKCS1(_ signature: [UInt8], message: [UInt8], key: RSAKeyHandle) -> Bool {
            guard
                let context = try? digestContext(
                    key: key,
                    initialise: { context, keyContext in
                        EVP_DigestVerifyInit(context, keyContext, EVP_sha512(), nil, key.key)
                    })
            else { return false }
            defer { EVP_MD_CTX_free(context) }
            let input = message.isEmpty ? [0] : message
            let valid = EVP_DigestVerify(context, signature, signature.count, input, message.count) == 1
            if !valid { _ = drainOpenSSLErrors() }
            return valid
        }
    }
#endif
