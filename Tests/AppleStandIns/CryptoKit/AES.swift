import COpenSSL
import Foundation

/// https://developer.apple.com/documentation/cryptokit/aes
@available(iOS 13.0, macOS 10.15, watchOS 6.0, tvOS 13.0, *)
public enum AES {
    /// https://developer.apple.com/documentation/cryptokit/aes/gcm
    public enum GCM {
        /// https://developer.apple.com/documentation/cryptokit/aes/gcm/nonce
        public struct Nonce: ContiguousBytes, Sequence, Sendable {
            let bytes: [UInt8]

            /// https://developer.apple.com/documentation/cryptokit/aes/gcm/nonce/init(data:)
            ///
            /// Apple's accepts 12 bytes or more; this stand-in only the standard 12 (all Tidings uses).
            public init<D: DataProtocol>(data: D) throws {
                guard data.count == 12 else { throw CryptoKitError.incorrectParameterSize }
                bytes = [UInt8](data)
            }

            /// https://developer.apple.com/documentation/cryptokit/aes/gcm/nonce/withunsafebytes(_:)
            public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
                try bytes.withUnsafeBytes(body)
            }

            /// https://developer.apple.com/documentation/cryptokit/aes/gcm/nonce/makeiterator()
            public func makeIterator() -> IndexingIterator<[UInt8]> { bytes.makeIterator() }
        }

        /// https://developer.apple.com/documentation/cryptokit/aes/gcm/sealedbox
        public struct SealedBox: Sendable {
            /// https://developer.apple.com/documentation/cryptokit/aes/gcm/sealedbox/nonce
            public let nonce: AES.GCM.Nonce
            let ciphertextBytes: [UInt8]
            let tagBytes: [UInt8]

            /// https://developer.apple.com/documentation/cryptokit/aes/gcm/sealedbox/ciphertext
            public var ciphertext: Data { Data(ciphertextBytes) }
            /// https://developer.apple.com/documentation/cryptokit/aes/gcm/sealedbox/tag
            public var tag: Data { Data(tagBytes) }

            /// https://developer.apple.com/documentation/cryptokit/aes/gcm/sealedbox/init(nonce:ciphertext:tag:)
            public init<C: DataProtocol, T: DataProtocol>(nonce: AES.GCM.Nonce, ciphertext: C, tag: T) throws {
                guard tag.count == 16 else { throw CryptoKitError.incorrectParameterSize }
                self.nonce = nonce
                ciphertextBytes = [UInt8](ciphertext)
                tagBytes = [UInt8](tag)
            }
        }

        /// https://developer.apple.com/documentation/cryptokit/aes/gcm/seal(_:using:nonce:authenticating:)
        public static func seal<Plaintext: DataProtocol, AuthenticatedData: DataProtocol>(
            _ message: Plaintext, using key: SymmetricKey, nonce: AES.GCM.Nonce? = nil,
            authenticating authenticatedData: AuthenticatedData
        ) throws -> AES.GCM.SealedBox {
            let nonce = try nonce ?? AES.GCM.Nonce(data: randomBytes(12))
            let plaintext = [UInt8](message)
            let aad = [UInt8](authenticatedData)
            let context = try makeContext(key: key, nonce: nonce, encrypting: true)
            defer { EVP_CIPHER_CTX_free(context) }
            var length: Int32 = 0
            if !aad.isEmpty {
                guard EVP_EncryptUpdate(context, nil, &length, aad, Int32(aad.count)) == 1 else {
                    throw CryptoKitError.underlyingCoreCryptoError(error: -1)
                }
            }
            var ciphertext = [UInt8](repeating: 0, count: plaintext.count)
            if !plaintext.isEmpty {
                guard EVP_EncryptUpdate(context, &ciphertext, &length, plaintext, Int32(plaintext.count)) == 1 else {
                    throw CryptoKitError.underlyingCoreCryptoError(error: -1)
                }
            }
            var tail = [UInt8](repeating: 0, count: 16)
            var tag = [UInt8](repeating: 0, count: 16)
            guard EVP_EncryptFinal_ex(context, &tail, &length) == 1, copenssl_gcm_get_tag(context, &tag, 16) == 1 else {
                throw CryptoKitError.underlyingCoreCryptoError(error: -1)
            }
            return try SealedBox(nonce: nonce, ciphertext: ciphertext, tag: tag)
        }

        /// https://developer.apple.com/documentation/cryptokit/aes/gcm/open(_:using:authenticating:)
        public static func open<AuthenticatedData: DataProtocol>(
            _ sealedBox: AES.GCM.SealedBox, using key: SymmetricKey, authenticating authenticatedData: AuthenticatedData
        ) throws -> Data {
            let aad = [UInt8](authenticatedData)
            let ciphertext = sealedBox.ciphertextBytes
            let context = try makeContext(key: key, nonce: sealedBox.nonce, encrypting: false)
            defer { EVP_CIPHER_CTX_free(context) }
            var length: Int32 = 0
            if !aad.isEmpty {
                guard EVP_DecryptUpdate(context, nil, &length, aad, Int32(aad.count)) == 1 else {
                    throw CryptoKitError.underlyingCoreCryptoError(error: -1)
                }
            }
            var plaintext = [UInt8](repeating: 0, count: ciphertext.count)
            if !ciphertext.isEmpty {
                guard EVP_DecryptUpdate(context, &plaintext, &length, ciphertext, Int32(ciphertext.count)) == 1 else {
                    throw CryptoKitError.underlyingCoreCryptoError(error: -1)
                }
            }
            var tag = sealedBox.tagBytes
            var tail = [UInt8](repeating: 0, count: 16)
            guard copenssl_gcm_set_tag(context, &tag, 16) == 1, EVP_DecryptFinal_ex(context, &tail, &length) == 1
            else { throw CryptoKitError.authenticationFailure }
            return Data(plaintext)
        }

        private static func makeContext(key: SymmetricKey, nonce: AES.GCM.Nonce, encrypting: Bool) throws
            -> OpaquePointer
        {
            let cipher: OpaquePointer?
            switch key.bytes.count {
            case 16: cipher = EVP_aes_128_gcm()
            case 24: cipher = EVP_aes_192_gcm()
            case 32: cipher = EVP_aes_256_gcm()
            default: throw CryptoKitError.incorrectKeySize
            }
            guard let context = EVP_CIPHER_CTX_new() else { throw CryptoKitError.underlyingCoreCryptoError(error: -1) }
            let status =
                encrypting
                ? EVP_EncryptInit_ex(context, cipher, nil, key.bytes, nonce.bytes)
                : EVP_DecryptInit_ex(context, cipher, nil, key.bytes, nonce.bytes)
            guard status == 1 else {
                EVP_CIPHER_CTX_free(context)
                throw CryptoKitError.underlyingCoreCryptoError(error: -1)
            }
            return context
        }
    }
}

func randomBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    return (0..<count).map { _ in generator.next() }
}
