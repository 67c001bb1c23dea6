#if TIDINGS_OPENSSL
    import COpenSSL
#else
    import CryptoKit
#endif

extension TidingsCrypto {
    /// `TidingsCrypto.AESGCM` is authenticated encryption with AES in Galois/Counter Mode (NIST SP 800-38D).
    ///
    /// Keys are 128 or 256 bits, nonces 96 bits, tags 128 bits. Opening checks the tag over the
    /// ciphertext and the associated data before returning anything: any change to ciphertext, tag,
    /// nonce, associated data or key fails with ``CryptoError/authenticationFailure``.
    ///
    /// For example:
    ///
    /// ```swift
    /// let key = SymmetricKey.random()
    /// let box = try AESGCM.sealCombined(Array("hello".utf8), key: key, authenticating: Array("row 42".utf8))
    /// let plain = try AESGCM.openCombined(box, key: key, authenticating: Array("row 42".utf8))
    /// ```
    ///
    /// - Warning: Never seal two messages under the same key and nonce; prefer ``sealCombined(_:key:authenticating:)``,
    ///   which draws a random nonce.
    public enum AESGCM {
        /// The nonce size in bytes (96 bits).
        public static let nonceByteCount = 12
        /// The authentication tag size in bytes (128 bits).
        public static let tagByteCount = 16

        /// Encrypts `plaintext` and authenticates it together with `aad`.
        ///
        /// - Parameters:
        ///   - plaintext: The bytes to encrypt (may be empty).
        ///   - key: A 128- or 256-bit key.
        ///   - nonce: 12 bytes, unique for this key.
        ///   - aad: Associated data that is authenticated but not encrypted (may be empty).
        /// - Returns: The ciphertext (as long as the plaintext) and the 16-byte tag.
        /// - Throws: `CryptoError.invalidNonceSize`, `.invalidInput` for inputs beyond 2 GiB, `.backend`.
        public static func seal(
            _ plaintext: [UInt8], key: TidingsCrypto.SymmetricKey, nonce: [UInt8], authenticating aad: [UInt8] = []
        ) throws(CryptoError) -> (ciphertext: [UInt8], tag: [UInt8]) {
            guard nonce.count == nonceByteCount else { throw .invalidNonceSize(nonce.count) }
            return try Backend.seal(plaintext, key: key.bytes, nonce: nonce, aad: aad)
        }

        /// Checks the tag and decrypts.
        ///
        /// - Returns: The plaintext, only when the tag matches.
        /// - Throws: `CryptoError.authenticationFailure` when anything was altered or the key is wrong
        ///   (a tag of the wrong length counts as altered); `.invalidNonceSize`; `.invalidInput`; `.backend`.
        public static func open(
            _ ciphertext: [UInt8], tag: [UInt8], key: TidingsCrypto.SymmetricKey, nonce: [UInt8],
            authenticating aad: [UInt8] = []
        ) throws(CryptoError) -> [UInt8] {
            guard nonce.count == nonceByteCount else { throw .invalidNonceSize(nonce.count) }
            guard tag.count == tagByteCount else { throw .authenticationFailure }
            return try Backend.open(ciphertext, tag: tag, key: key.bytes, nonce: nonce, aad: aad)
        }

        /// Encrypts under a fresh random nonce and returns `nonce ‖ ciphertext ‖ tag`
        /// (28 bytes longer than the plaintext).
        ///
        /// - Throws: `CryptoError.invalidInput` for inputs beyond 2 GiB, `.backend`.
        public static func sealCombined(
            _ plaintext: [UInt8], key: TidingsCrypto.SymmetricKey, authenticating aad: [UInt8] = []
        ) throws(CryptoError) -> [UInt8] {
            let nonce = TidingsCrypto.SecureRandom.bytes(nonceByteCount)
            let sealed = try seal(plaintext, key: key, nonce: nonce, authenticating: aad)
            return nonce + sealed.ciphertext + sealed.tag
        }

        /// Opens a `nonce ‖ ciphertext ‖ tag` box made by ``sealCombined(_:key:authenticating:)``.
        ///
        /// - Throws: `CryptoError.invalidInput` when `combined` is shorter than 28 bytes,
        ///   `.authenticationFailure` when anything was altered or the key is wrong, `.backend`.
        public static func openCombined(
            _ combined: [UInt8], key: TidingsCrypto.SymmetricKey, authenticating aad: [UInt8] = []
        ) throws(CryptoError) -> [UInt8] {
            guard combined.count >= nonceByteCount + tagByteCount else {
                throw .invalidInput("AES-GCM box of \(combined.count) bytes is shorter than nonce and tag (28)")
            }
            let nonce = Array(combined[..<nonceByteCount])
            let ciphertext = Array(combined[nonceByteCount..<(combined.count - tagByteCount)])
            let tag = Array(combined[(combined.count - tagByteCount)...])
            return try open(ciphertext, tag: tag, key: key, nonce: nonce, authenticating: aad)
        }
    }
}

#if TIDINGS_OPENSSL
    extension TidingsCrypto.AESGCM {
        fileprivate enum Backend {
            static func cipher(forKeyCount count: Int) -> OpaquePointer? {
                count == 16 ? EVP_aes_128_gcm() : EVP_aes_256_gcm()
            }

            static func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) throws(CryptoError) -> (
                ciphertext: [UInt8], tag: [UInt8]
            ) {
                guard plaintext.count < Int(Int32.max), aad.count < Int(Int32.max) else {
                    throw .invalidInput("AES-GCM input over 2 GiB")
                }
                guard let context = EVP_CIPHER_CTX_new() else { throw .backend("EVP_CIPHER_CTX_new") }
                defer { EVP_CIPHER_CTX_free(context) }
                guard EVP_EncryptInit_ex(context, cipher(forKeyCount: key.count), nil, key, nonce) == 1 else {
                    throw .backend("EVP_EncryptInit_ex")
                }
                var length: Int32 = 0
                if !aad.isEmpty {
                    guard EVP_EncryptUpdate(context, nil, &length, aad, Int32(aad.count)) == 1 else {
                        throw .backend("EVP_EncryptUpdate(aad)")
                    }
                }
                // GCM is a stream mode: the ciphertext is exactly as long as the plaintext.
                var ciphertext = [UInt8](repeating: 0, count: plaintext.count)
                var written = 0
                if !plaintext.isEmpty {
                    guard EVP_EncryptUpdate(context, &ciphertext, &length, plaintext, Int32(plaintext.count)) == 1
                    else {
                        throw .backend("EVP_EncryptUpdate")
                    }
                    written = Int(length)
                }
                var tail = [UInt8](repeating: 0, count: 16)
                guard EVP_EncryptFinal_ex(context, &tail, &length) == 1, written + Int(length) == plaintext.count else {
                    throw .backend("EVP_EncryptFinal_ex")
                }
                var tag = [UInt8](repeating: 0, count: tagByteCount)
                guard copenssl_gcm_get_tag(context, &tag, Int32(tagByteCount)) == 1 else {
                    throw .backend("EVP_CTRL_GCM_GET_TAG")
                }
                return (ciphertext, tag)
            }

            static func open(_ ciphertext: [UInt8], tag: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8])
                throws(CryptoError) -> [UInt8]
            {
                guard ciphertext.count < Int(Int32.max), aad.count < Int(Int32.max) else {
                    throw .invalidInput("AES-GCM input over 2 GiB")
                }
                guard let context = EVP_CIPHER_CTX_new() else { throw .backend("EVP_CIPHER_CTX_new") }
                defer { EVP_CIPHER_CTX_free(context) }
                guard EVP_DecryptInit_ex(context, cipher(forKeyCount: key.count), nil, key, nonce) == 1 else {
                    throw .backend("EVP_DecryptInit_ex")
                }
                var length: Int32 = 0
                if !aad.isEmpty {
                    guard EVP_DecryptUpdate(context, nil, &length, aad, Int32(aad.count)) == 1 else {
                        throw .backend("EVP_DecryptUpdate(aad)")
                    }
                }
                var plaintext = [UInt8](repeating: 0, count: ciphertext.count)
                if !ciphertext.isEmpty {
                    guard EVP_DecryptUpdate(context, &plaintext, &length, ciphertext, Int32(ciphertext.count)) == 1
                    else {
                        throw .backend("EVP_DecryptUpdate")
                    }
                }
                var expectedTag = tag
                guard copenssl_gcm_set_tag(context, &expectedTag, Int32(tagByteCount)) == 1 else {
                    throw .backend("EVP_CTRL_GCM_SET_TAG")
                }
                var tail = [UInt8](repeating: 0, count: 16)
                guard EVP_DecryptFinal_ex(context, &tail, &length) == 1 else {
                    // Unauthenticated plaintext must not linger in memory we hand back to the allocator.
                    for index in plaintext.indices { plaintext[index] = 0 }
                    throw .authenticationFailure
                }
                return plaintext
            }
        }
    }
#else
    extension TidingsCrypto.AESGCM {
        fileprivate enum Backend {
            static func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]) throws(CryptoError) -> (
                ciphertext: [UInt8], tag: [UInt8]
            ) {
                do {
                    let box = try AES.GCM.seal(
                        plaintext, using: CryptoKit.SymmetricKey(data: key), nonce: AES.GCM.Nonce(data: nonce),
                        authenticating: aad)
                    return ([UInt8](box.ciphertext), [UInt8](box.tag))
                } catch {
                    throw .backend("AES.GCM.seal: \(error)")
                }
            }

            static func open(_ ciphertext: [UInt8], tag: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8])
                throws(CryptoError) -> [UInt8]
            {
                do {
                    let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: ciphertext, tag: tag)
                    return [UInt8](try AES.GCM.open(box, using: CryptoKit.SymmetricKey(data: key), authenticating: aad))
                } catch CryptoKitError.authenticationFailure {
                    throw .authenticationFailure
                } catch {
                    throw .backend("AES.GCM.open: \(error)")
                }
            }
        }
    }
#endif
