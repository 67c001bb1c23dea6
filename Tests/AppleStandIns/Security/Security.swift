// A stand-in for Apple's Security framework, for the TIDINGS_APPLE_STANDINS configuration only (see
// docs/ARCHITECTURE.md, "Platforms"): exactly the declarations Tidings' Apple branches use, with the labels,
// optionality and availability of Apple's documentation, implemented over OpenSSL. Never in a library product.
//
// Core Foundation is not importable on Linux, so the few CF types those calls take are declared here, and
// toll-free bridging (`Data(bytes) as CFData`, `dictionary as CFDictionary`, `cfData as Data`) is modelled by
// type aliases: a bridging `as` that Apple requires compiles here, but so would a missing one (the Mac workflow
// is what catches that).
import COpenSSL
import Foundation

// MARK: - Core Foundation, as far as these calls need it

/// https://developer.apple.com/documentation/corefoundation/cfstring (bridged to String)
public typealias CFString = String
/// https://developer.apple.com/documentation/corefoundation/cfdata (bridged to Data)
public typealias CFData = Data
/// https://developer.apple.com/documentation/corefoundation/cfdictionary (bridged to [AnyHashable: Any])
public typealias CFDictionary = [AnyHashable: Any]

/// https://developer.apple.com/documentation/corefoundation/cferror
public final class CFError: CustomStringConvertible {
    let reason: String
    init(_ reason: String) { self.reason = reason }
    public var description: String { "CFError(\(reason))" }
}

/// https://developer.apple.com/documentation/security/osstatus
public typealias OSStatus = Int32

/// https://developer.apple.com/documentation/security/errsecsuccess
@available(iOS 2.0, macOS 10.0, watchOS 2.0, tvOS 9.0, *)
public var errSecSuccess: OSStatus { 0 }
/// https://developer.apple.com/documentation/security/errsecparam
@available(iOS 2.0, macOS 10.0, watchOS 2.0, tvOS 9.0, *)
public var errSecParam: OSStatus { -50 }

// MARK: - Random bytes

/// https://developer.apple.com/documentation/security/secrandomref
public typealias SecRandomRef = OpaquePointer

/// https://developer.apple.com/documentation/security/ksecrandomdefault
///
/// Apple's is declared `SecRandomRef` and is NULL; an optional here, since Swift has no null OpaquePointer.
@available(iOS 2.0, macOS 10.7, watchOS 2.0, tvOS 9.0, *)
nonisolated(unsafe) public let kSecRandomDefault: SecRandomRef? = nil

/// https://developer.apple.com/documentation/security/secrandomcopybytes(_:_:_:)
@available(iOS 2.0, macOS 10.7, watchOS 2.0, tvOS 9.0, *)
public func SecRandomCopyBytes(_ rnd: SecRandomRef?, _ count: Int, _ bytes: UnsafeMutableRawPointer) -> Int32 {
    guard count >= 0, count <= Int(Int32.max) else { return errSecParam }
    return RAND_bytes(bytes.assumingMemoryBound(to: UInt8.self), Int32(count)) == 1 ? errSecSuccess : errSecParam
}

// MARK: - Key attributes

/// https://developer.apple.com/documentation/security/ksecattrkeytype
@available(iOS 2.0, macOS 10.5, watchOS 2.0, tvOS 9.0, *)
public let kSecAttrKeyType: CFString = "type"
/// https://developer.apple.com/documentation/security/ksecattrkeytypersa
@available(iOS 2.0, macOS 10.5, watchOS 2.0, tvOS 9.0, *)
public let kSecAttrKeyTypeRSA: CFString = "42"
/// https://developer.apple.com/documentation/security/ksecattrkeysizeinbits
@available(iOS 2.0, macOS 10.5, watchOS 2.0, tvOS 9.0, *)
public let kSecAttrKeySizeInBits: CFString = "bsiz"
/// https://developer.apple.com/documentation/security/ksecattrkeyclass
@available(iOS 2.0, macOS 10.5, watchOS 2.0, tvOS 9.0, *)
public let kSecAttrKeyClass: CFString = "kcls"
/// https://developer.apple.com/documentation/security/ksecattrkeyclassprivate
@available(iOS 2.0, macOS 10.5, watchOS 2.0, tvOS 9.0, *)
public let kSecAttrKeyClassPrivate: CFString = "1"
/// https://developer.apple.com/documentation/security/ksecattrkeyclasspublic
@available(iOS 2.0, macOS 10.5, watchOS 2.0, tvOS 9.0, *)
public let kSecAttrKeyClassPublic: CFString = "0"

// MARK: - Keys

/// https://developer.apple.com/documentation/security/seckey
///
/// Not `Sendable`, like Apple's.
public final class SecKey {
    let pkey: OpaquePointer
    let isPrivate: Bool

    init(pkey: OpaquePointer, isPrivate: Bool) {
        self.pkey = pkey
        self.isPrivate = isPrivate
    }

    deinit { EVP_PKEY_free(pkey) }
}

/// https://developer.apple.com/documentation/security/seckeyalgorithm
@available(iOS 10.0, macOS 10.12, watchOS 3.0, tvOS 10.0, *)
public struct SecKeyAlgorithm: Hashable, RawRepresentable, Sendable {
    public var rawValue: CFString
    public init(rawValue: CFString) { self.rawValue = rawValue }

    /// https://developer.apple.com/documentation/security/seckeyalgorithm/rsaencryptionraw
    public static let rsaEncryptionRaw = SecKeyAlgorithm(rawValue: "algid:encrypt:RSA:raw")
    /// https://developer.apple.com/documentation/security/seckeyalgorithm/rsaencryptionpkcs1
    public static let rsaEncryptionPKCS1 = SecKeyAlgorithm(rawValue: "algid:encrypt:RSA:PKCS1")
    /// https://developer.apple.com/documentation/security/seckeyalgorithm/rsaencryptionoaepsha1
    public static let rsaEncryptionOAEPSHA1 = SecKeyAlgorithm(rawValue: "algid:encrypt:RSA:OAEP:SHA1")
    /// https://developer.apple.com/documentation/security/seckeyalgorithm/rsasignaturemessagepkcs1v15sha512
    public static let rsaSignatureMessagePKCS1v15SHA512 = SecKeyAlgorithm(
        rawValue: "algid:sign:RSA:message-PKCS1v15:SHA512")
}

/// Stores a failure where Apple's calls do: a retained CFError the caller takes (not Apple API).
private func fail<T>(_ error: UnsafeMutablePointer<Unmanaged<CFError>?>?, _ reason: String) -> T? {
    ERR_clear_error()
    error?.pointee = Unmanaged.passRetained(CFError(reason))
    return nil
}

/// https://developer.apple.com/documentation/security/seckeycreaterandomkey(_:_:)
@available(iOS 10.0, macOS 10.12, watchOS 3.0, tvOS 10.0, *)
public func SecKeyCreateRandomKey(_ parameters: CFDictionary, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?)
    -> SecKey?
{
    guard parameters[kSecAttrKeyType] as? CFString == kSecAttrKeyTypeRSA,
        let bits = parameters[kSecAttrKeySizeInBits] as? Int, (1024...8192).contains(bits)
    else { return fail(error, "unsupported key type or size") }
    guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else { return fail(error, "EVP_PKEY_CTX") }
    defer { EVP_PKEY_CTX_free(context) }
    var key: OpaquePointer?
    guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(bits)) == 1,
        EVP_PKEY_generate(context, &key) == 1, let key
    else { return fail(error, "RSA key generation") }
    return SecKey(pkey: key, isPrivate: true)
}

/// https://developer.apple.com/documentation/security/seckeygetblocksize(_:)
@available(iOS 2.0, macOS 10.6, watchOS 2.0, tvOS 9.0, *)
public func SecKeyGetBlockSize(_ key: SecKey) -> Int { Int(EVP_PKEY_get_size(key.pkey)) }

/// https://developer.apple.com/documentation/security/seckeycreatewithdata(_:_:_:)
///
/// RSA keys in Apple's external representation: PKCS #1 `RSAPrivateKey` or `RSAPublicKey`, DER.
@available(iOS 10.0, macOS 10.12, watchOS 3.0, tvOS 10.0, *)
public func SecKeyCreateWithData(
    _ keyData: CFData, _ attributes: CFDictionary, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> SecKey? {
    guard attributes[kSecAttrKeyType] as? CFString == kSecAttrKeyTypeRSA,
        let keyClass = attributes[kSecAttrKeyClass] as? CFString,
        keyClass == kSecAttrKeyClassPrivate || keyClass == kSecAttrKeyClassPublic
    else { return fail(error, "kSecAttrKeyType and kSecAttrKeyClass are required") }
    let isPrivate = keyClass == kSecAttrKeyClassPrivate
    let bytes = [UInt8](keyData)
    let key: OpaquePointer? = bytes.withUnsafeBufferPointer { buffer in
        var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
        return isPrivate
            ? d2i_PrivateKey(EVP_PKEY_RSA, nil, &cursor, buffer.count)
            : d2i_PublicKey(EVP_PKEY_RSA, nil, &cursor, buffer.count)
    }
    guard let key else { return fail(error, "not a PKCS #1 RSA key") }
    return SecKey(pkey: key, isPrivate: isPrivate)
}

/// https://developer.apple.com/documentation/security/seckeycopyexternalrepresentation(_:_:)
@available(iOS 10.0, macOS 10.12, watchOS 3.0, tvOS 10.0, *)
public func SecKeyCopyExternalRepresentation(_ key: SecKey, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?)
    -> CFData?
{
    var output: UnsafeMutablePointer<UInt8>?
    let length = key.isPrivate ? i2d_PrivateKey(key.pkey, &output) : i2d_PublicKey(key.pkey, &output)
    guard length > 0, let output else { return fail(error, "i2d") }
    defer { CRYPTO_free(output, #fileID, #line) }
    return Data(bytes: output, count: Int(length))
}

/// https://developer.apple.com/documentation/security/seckeycopypublickey(_:)
@available(iOS 10.0, macOS 10.12, watchOS 3.0, tvOS 10.0, *)
public func SecKeyCopyPublicKey(_ key: SecKey) -> SecKey? {
    var output: UnsafeMutablePointer<UInt8>?
    let length = i2d_PublicKey(key.pkey, &output)
    guard length > 0, let output else { return nil }
    defer { CRYPTO_free(output, #fileID, #line) }
    var cursor: UnsafePointer<UInt8>? = UnsafePointer(output)
    guard let publicKey = d2i_PublicKey(EVP_PKEY_RSA, nil, &cursor, Int(length)) else { return nil }
    return SecKey(pkey: publicKey, isPrivate: false)
}

/// A context for `key` with `algorithm`'s padding, or nil (not Apple API).
private func context(
    _ key: SecKey, _ algorithm: SecKeyAlgorithm, initialise: (OpaquePointer) -> Int32
) -> OpaquePointer? {
    guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pkey, nil) else { return nil }
    var configured = initialise(context) == 1
    switch algorithm {
    case .rsaEncryptionRaw:
        configured = configured && EVP_PKEY_CTX_set_rsa_padding(context, RSA_NO_PADDING) == 1
    case .rsaEncryptionPKCS1:
        configured = configured && EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING) == 1
    case .rsaEncryptionOAEPSHA1:
        configured =
            configured && EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_OAEP_PADDING) == 1
            && EVP_PKEY_CTX_set_rsa_oaep_md(context, EVP_sha1()) == 1
            && EVP_PKEY_CTX_set_rsa_mgf1_md(context, EVP_sha1()) == 1
    default:
        configured = false
    }
    guard configured else {
        EVP_PKEY_CTX_free(context)
        return nil
    }
    return context
}

/// https://developer.apple.com/documentation/security/seckeycreateencrypteddata(_:_:_:_:)
///
/// Encrypts with a public key only, as Apple's does.
@available(iOS 10.0, macOS 10.12, watchOS 3.0, tvOS 10.0, *)
public func SecKeyCreateEncryptedData(
    _ key: SecKey, _ algorithm: SecKeyAlgorithm, _ plaintext: CFData,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> CFData? {
    guard !key.isPrivate, let context = context(key, algorithm, initialise: { EVP_PKEY_encrypt_init($0) }) else {
        return fail(error, "algorithm not supported by this key")
    }
    defer { EVP_PKEY_CTX_free(context) }
    let input = [UInt8](plaintext)
    var length = SecKeyGetBlockSize(key)
    var output = [UInt8](repeating: 0, count: length)
    let pinned = input.isEmpty ? [0] : input
    guard EVP_PKEY_encrypt(context, &output, &length, pinned, input.count) == 1 else {
        return fail(error, "encryption failed")
    }
    return Data(output.prefix(length))
}

/// https://developer.apple.com/documentation/security/seckeycreatedecrypteddata(_:_:_:_:)
///
/// Decrypts with a private key only, as Apple's does.
@available(iOS 10.0, macOS 10.12, watchOS 3.0, tvOS 10.0, *)
public func SecKeyCreateDecryptedData(
    _ key: SecKey, _ algorithm: SecKeyAlgorithm, _ ciphertext: CFData,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> CFData? {
    guard key.isPrivate, let context = context(key, algorithm, initialise: { EVP_PKEY_decrypt_init($0) }) else {
        return fail(error, "algorithm not supported by this key")
    }
    defer { EVP_PKEY_CTX_free(context) }
    let input = [UInt8](ciphertext)
    guard input.count == SecKeyGetBlockSize(key) else { return fail(error, "ciphertext is not one block") }
    var length = SecKeyGetBlockSize(key)
    var output = [UInt8](repeating: 0, count: length)
    guard EVP_PKEY_decrypt(context, &output, &length, input, input.count) == 1 else {
        return fail(error, "decryption failed")
    }
    return Data(output.prefix(length))
}

/// https://developer.apple.com/documentation/security/seckeycreatesignature(_:_:_:_:)
@available(iOS 10.0, macOS 10.12, watchOS 3.0, tvOS 10.0, *)
public func SecKeyCreateSignature(
    _ key: SecKey, _ algorithm: SecKeyAlgorithm, _ dataToSign: CFData,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> CFData? {
    guard key.isPrivate, algorithm == .rsaSignatureMessagePKCS1v15SHA512, let context = EVP_MD_CTX_new() else {
        return fail(error, "algorithm not supported by this key")
    }
    defer { EVP_MD_CTX_free(context) }
    let message = [UInt8](dataToSign)
    var length = 0
    guard EVP_DigestSignInit(context, nil, EVP_sha512(), nil, key.pkey) == 1,
        EVP_DigestSign(context, nil, &length, message, message.count) == 1
    else { return fail(error, "signing failed") }
    var signature = [UInt8](repeating: 0, count: length)
    guard EVP_DigestSign(context, &signature, &length, message, message.count) == 1 else {
        return fail(error, "signing failed")
    }
    return Data(signature.prefix(length))
}

/// https://developer.apple.com/documentation/security/seckeyverifysignature(_:_:_:_:_:)
@available(iOS 10.0, macOS 10.12, watchOS 3.0, tvOS 10.0, *)
public func SecKeyVerifySignature(
    _ key: SecKey, _ algorithm: SecKeyAlgorithm, _ signedData: CFData, _ signature: CFData,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> Bool {
    guard !key.isPrivate, algorithm == .rsaSignatureMessagePKCS1v15SHA512, let context = EVP_MD_CTX_new() else {
        return fail(error, "algorithm not supported by this key") ?? false
    }
    defer { EVP_MD_CTX_free(context) }
    let message = [UInt8](signedData)
    let signatureBytes = [UInt8](signature)
    guard EVP_DigestVerifyInit(context, nil, EVP_sha512(), nil, key.pkey) == 1,
        EVP_DigestVerify(context, signatureBytes, signatureBytes.count, message, message.count) == 1
    else { return fail(error, "signature does not verify") ?? false }
    return true
}
