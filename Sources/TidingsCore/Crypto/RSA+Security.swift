#if !TIDINGS_OPENSSL
    import Foundation
    import Security

    /// Holds one `SecKey`; Security keys are immutable and thread-safe.
    final class RSAKeyHandle: @unchecked Sendable {
        let key: SecKey

        init(key: SecKey) { self.key = key }
    }

    enum RSABackend {
        static func generate(bitCount: Int) throws(CryptoError) -> RSAKeyHandle {
            let attributes: [CFString: Any] = [kSecAttrKeyType: kSecAttrKeyTypeRSA, kSecAttrKeySizeInBits: bitCount]
            var error: Unmanaged<CFError>?
            guard let key = SecKeyCreateRandomKey(attributes as CFDictionary, &error) else {
                throw .backend("SecKeyCreateRandomKey: \(String(describing: error?.takeRetainedValue()))")
            }
            return RSAKeyHandle(key: key)
        }

        static func bitCount(_ handle: RSAKeyHandle) -> Int { SecKeyGetBlockSize(handle.key) * 8 }

        static func checkSize(_ handle: RSAKeyHandle) throws(CryptoError) {
            let bits = bitCount(handle)
            guard TidingsCrypto.RSA.allowedBitCounts.contains(bits) else {
                throw .invalidKey("RSA key of \(bits) bits; allowed 2048...4096")
            }
        }

        private static func makeKey(pkcs1: [UInt8], keyClass: CFString) throws(CryptoError) -> RSAKeyHandle {
            let attributes: [CFString: Any] = [kSecAttrKeyType: kSecAttrKeyTypeRSA, kSecAttrKeyClass: keyClass]
            var error: Unmanaged<CFError>?
            guard let key = SecKeyCreateWithData(Data(pkcs1) as CFData, attributes as CFDictionary, &error) else {
                throw .invalidKey("Security refused the RSA key")
            }
            return RSAKeyHandle(key: key)
        }

        static func importPrivate(pem: String) throws(CryptoError) -> RSAKeyHandle {
            let pkcs1: [UInt8]
            if pem.contains("-----BEGIN RSA PRIVATE KEY-----") {
                pkcs1 = try TidingsCrypto.PEM.decode(pem, label: "RSA PRIVATE KEY")
            } else {
                pkcs1 = try RSAKeyDER.pkcs1PrivateKey(fromPKCS8: TidingsCrypto.PEM.decode(pem, label: "PRIVATE KEY"))
            }
            return try makeKey(pkcs1: pkcs1, keyClass: kSecAttrKeyClassPrivate)
        }

        static func importPublic(pem: String) throws(CryptoError) -> RSAKeyHandle {
            let spki = try TidingsCrypto.PEM.decode(pem, label: "PUBLIC KEY")
            return try makeKey(
                pkcs1: RSAKeyDER.pkcs1PublicKey(fromSubjectPublicKeyInfo: spki), keyClass: kSecAttrKeyClassPublic)
        }

        private static func externalRepresentation(_ handle: RSAKeyHandle) throws(CryptoError) -> [UInt8] {
            var error: Unmanaged<CFError>?
            guard let data = SecKeyCopyExternalRepresentation(handle.key, &error) as Data? else {
                throw .backend("SecKeyCopyExternalRepresentation")
            }
            return [UInt8](data)
        }

        static func exportPrivatePEM(_ handle: RSAKeyHandle) throws(CryptoError) -> String {
            TidingsCrypto.PEM.encode(
                RSAKeyDER.pkcs8(wrapping: try externalRepresentation(handle)), label: "PRIVATE KEY")
        }

        static func exportPublicPEM(_ handle: RSAKeyHandle) throws(CryptoError) -> String {
            TidingsCrypto.PEM.encode(
                RSAKeyDER.subjectPublicKeyInfo(wrapping: try externalRepresentation(handle)), label: "PUBLIC KEY")
        }

        static func publicHandle(of handle: RSAKeyHandle) throws(CryptoError) -> RSAKeyHandle {
            guard let key = SecKeyCopyPublicKey(handle.key) else { throw .backend("SecKeyCopyPublicKey") }
            return RSAKeyHandle(key: key)
        }

        private static func algorithm(_ padding: TidingsCrypto.RSA.Padding) -> SecKeyAlgorithm {
            switch padding {
            case .oaepSHA1: .rsaEncryptionOAEPSHA1
            case .pkcs1v15: .rsaEncryptionPKCS1
            }
        }

        static func encrypt(_ plaintext: [UInt8], key: RSAKeyHandle, padding: TidingsCrypto.RSA.Padding)
            throws(CryptoError)
            -> [UInt8]
        {
            var error: Unmanaged<CFError>?
            guard let data = SecKeyCreateEncryptedData(key.key, algorithm(padding), Data(plaintext) as CFData, &error)
            else { throw .backend("SecKeyCreateEncryptedData") }
            return [UInt8](data as Data)
        }

        static func decrypt(_ ciphertext: [UInt8], key: RSAKeyHandle, padding: TidingsCrypto.RSA.Padding)
            throws(CryptoError)
            -> [UInt8]
        {
            if padding == .pkcs1v15 { return try decryptRejectingImplicitly(ciphertext, key: key) }
            var error: Unmanaged<CFError>?
            guard let data = SecKeyCreateDecryptedData(key.key, algorithm(padding), Data(ciphertext) as CFData, &error)
            else { throw .decryptionFailure }
            return [UInt8](data as Data)
        }

        /// PKCS#1 v1.5 decryption with implicit rejection, as on Linux: Security's own PKCS#1
        /// decryption fails on bad padding (an oracle), so it decrypts raw and decodes here.
        ///
        /// - Throws: `.decryptionFailure` only when Security refuses the raw block (not below the modulus).
        static func decryptRejectingImplicitly(_ ciphertext: [UInt8], key: RSAKeyHandle) throws(CryptoError)
            -> [UInt8]
        {
            let byteCount = SecKeyGetBlockSize(key.key)
            guard ciphertext.count == byteCount else { throw .decryptionFailure }
            var error: Unmanaged<CFError>?
            guard
                let data = SecKeyCreateDecryptedData(key.key, .rsaEncryptionRaw, Data(ciphertext) as CFData, &error)
                    as Data?, data.count <= byteCount
            else { throw .decryptionFailure }
            var encoded = [UInt8](repeating: 0, count: byteCount - data.count) + [UInt8](data)
            var exponent: [UInt8]
            do {
                exponent = try RSAKeyDER.privateExponent(fromPKCS1: externalRepresentation(key), byteCount: byteCount)
            } catch {
                RSAImplicitRejection.wipe(&encoded)
                throw error
            }
            return RSAImplicitRejection.message(encoded: &encoded, privateExponent: &exponent, ciphertext: ciphertext)
        }
    }
#endif
