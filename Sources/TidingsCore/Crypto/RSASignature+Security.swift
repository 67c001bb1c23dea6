#if !TIDINGS_OPENSSL
    import Foundation
    import Security

    extension RSABackend {
        static func signSHA512PKCS1(_ message: [UInt8], key: RSAKeyHandle) throws(CryptoError) -> [UInt8] {
            var error: Unmanaged<CFError>?
            guard
                let data = SecKeyCreateSignature(
                    key.key, .rsaSignatureMessagePKCS1v15SHA512, Data(message) as CFData, &error)
            else { throw .backend("SecKeyCreateSignature") }
            return [UInt8](data as Data)
        }

        static func verifySHA512PKCS1(_ signature: [UInt8], message: [UInt8], key: RSAKeyHandle) -> Bool {
            var error: Unmanaged<CFError>?
            return SecKeyVerifySignature(
                key.key, .rsaSignatureMessagePKCS1v15SHA512, Data(message) as CFData, Data(signature) as CFData,
                &error)
        }
    }
#endif
