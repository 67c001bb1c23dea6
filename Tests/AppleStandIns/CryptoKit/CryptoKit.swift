// A stand-in for Apple's CryptoKit, for the TIDINGS_APPLE_STANDINS configuration only (see docs/ARCHITECTURE.md,
// "Platforms"): exactly the declarations Tidings' Apple branches use, with the labels, generic constraints,
// optionality, throwing and availability of Apple's documentation, implemented over OpenSSL, so those branches
// compile and run on Linux. Never part of a library product.
import COpenSSL
import Foundation

// MARK: - Errors and keys

/// https://developer.apple.com/documentation/cryptokit/cryptokiterror
@available(iOS 13.0, macOS 10.15, watchOS 6.0, tvOS 13.0, *)
public enum CryptoKitError: Error {
    /// https://developer.apple.com/documentation/cryptokit/cryptokiterror/incorrectkeysize
    case incorrectKeySize
    /// https://developer.apple.com/documentation/cryptokit/cryptokiterror/incorrectparametersize
    case incorrectParameterSize
    /// https://developer.apple.com/documentation/cryptokit/cryptokiterror/authenticationfailure
    case authenticationFailure
    /// https://developer.apple.com/documentation/cryptokit/cryptokiterror/underlyingcorecryptoerror(error:)
    case underlyingCoreCryptoError(error: Int32)
}

/// https://developer.apple.com/documentation/cryptokit/symmetrickey
@available(iOS 13.0, macOS 10.15, watchOS 6.0, tvOS 13.0, *)
public struct SymmetricKey: ContiguousBytes, Sendable {
    let bytes: [UInt8]

    /// https://developer.apple.com/documentation/cryptokit/symmetrickey/init(data:)
    public init<D: ContiguousBytes>(data: D) { bytes = data.withUnsafeBytes { Array($0) } }

    /// https://developer.apple.com/documentation/cryptokit/symmetrickey/withunsafebytes(_:)
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }
}

/// https://developer.apple.com/documentation/cryptokit/sharedsecret
@available(iOS 13.0, macOS 10.15, watchOS 6.0, tvOS 13.0, *)
public struct SharedSecret: ContiguousBytes, Sendable {
    let bytes: [UInt8]

    /// https://developer.apple.com/documentation/cryptokit/sharedsecret/withunsafebytes(_:)
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }
}

// MARK: - Hashes

/// https://developer.apple.com/documentation/cryptokit/digest
@available(iOS 13.0, macOS 10.15, watchOS 6.0, tvOS 13.0, *)
public protocol Digest: Hashable, ContiguousBytes, Sequence where Element == UInt8 {}

/// https://developer.apple.com/documentation/cryptokit/hashfunction
@available(iOS 13.0, macOS 10.15, watchOS 6.0, tvOS 13.0, *)
public protocol HashFunction {
    /// https://developer.apple.com/documentation/cryptokit/hashfunction/digest
    associatedtype Digest: CryptoKit.Digest
    /// https://developer.apple.com/documentation/cryptokit/hashfunction/hash(data:)
    static func hash<D: DataProtocol>(data: D) -> Self.Digest
}

/// The OpenSSL digest behind a stand-in hash function (not Apple API: how HMAC finds it).
protocol OpenSSLHashFunction {
    static var messageDigest: OpaquePointer? { get }
    static var digestName: String { get }
}

func digest(_ data: some DataProtocol, with algorithm: OpaquePointer?) -> [UInt8] {
    let input = [UInt8](data)
    var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
    var length: UInt32 = 0
    let status = input.withUnsafeBytes { EVP_Digest($0.baseAddress, $0.count, &output, &length, algorithm, nil) }
    precondition(status == 1, "EVP_Digest failed: only allocation failure can get here")
    return Array(output.prefix(Int(length)))
}

/// https://developer.apple.com/documentation/cryptokit/sha256
@available(iOS 13.0, macOS 10.15, watchOS 6.0, tvOS 13.0, *)
public struct SHA256: HashFunction, OpenSSLHashFunction, Sendable {
    static var messageDigest: OpaquePointer? { EVP_sha256() }
    static var digestName: String { "SHA256" }
    /// https://developer.apple.com/documentation/cryptokit/sha256/hash(data:)
    public static func hash<D: DataProtocol>(data: D) -> SHA256Digest {
        SHA256Digest(bytes: digest(data, with: messageDigest))
    }
}

/// https://developer.apple.com/documentation/cryptokit/sha256digest
@available(iOS 13.0, macOS 10.15, watchOS 6.0, tvOS 13.0, *)
public struct SHA256Digest: Digest, Sendable {
    let bytes: [UInt8]
    public func makeIterator() -> IndexingIterator<[UInt8]> { bytes.makeIterator() }
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }
}

/// https://developer.apple.com/documentation/cryptokit/sha512
@available(iOS 13.0, macOS 10.15, watchOS 6.0, tvOS 13.0, *)
public struct SHA512: HashFunction, OpenSSLHashFunction, Sendable {
    static var messageDigest: OpaquePointer? { EVP_sha512() }
    static var digestName: String { "SHA512" }
    /// https://developer.apple.com/documentation/cryptokit/sha512/hash(data:)
    public static func hash<D: DataProtocol>(data: D) -> SHA512Digest {
        SHA512Digest(bytes: digest(data, with: messageDigest))
    }
}

/// https://developer.apple.com/documentation/cryptokit/sha512digest
@available(iOS 13.0, macOS 10.15, watchOS 6.0, tvOS 13.0, *)
public struct SHA512Digest: Digest, Sendable {
    let bytes: [UInt8]
    public func makeIterator() -> IndexingIterator<[UInt8]> { bytes.makeIterator() }
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }
}

/// https://developer.apple.com/documentation/cryptokit/insecure
@available(iOS 13.0, macOS 10.15, watchOS 6.0, tvOS 13.0, *)
public enum Insecure {
    /// https://developer.apple.com/documentation/cryptokit/insecure/sha1
    public struct SHA1: HashFunction, OpenSSLHashFunction, Sendable {
        static var messageDigest: OpaquePointer? { EVP_sha1() }
        static var digestName: String { "SHA1" }
        /// https://developer.apple.com/documentation/cryptokit/insecure/sha1/hash(data:)
        public static func hash<D: DataProtocol>(data: D) -> Insecure.SHA1Digest {
            Insecure.SHA1Digest(bytes: digest(data, with: messageDigest))
        }
    }

    /// https://developer.apple.com/documentation/cryptokit/insecure/sha1digest
    public struct SHA1Digest: Digest, Sendable {
        let bytes: [UInt8]
        public func makeIterator() -> IndexingIterator<[UInt8]> { bytes.makeIterator() }
        public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
            try bytes.withUnsafeBytes(body)
        }
    }
}

// MARK: - HMAC

/// https://developer.apple.com/documentation/cryptokit/messageauthenticationcode
@available(iOS 13.0, macOS 10.15, watchOS 6.0, tvOS 13.0, *)
public protocol MessageAuthenticationCode: Hashable, ContiguousBytes, Sequence where Element == UInt8 {}

/// https://developer.apple.com/documentation/cryptokit/hashedauthenticationcode
@available(iOS 13.0, macOS 10.15, watchOS 6.0, tvOS 13.0, *)
public struct HashedAuthenticationCode<H: HashFunction>: MessageAuthenticationCode, Sendable {
    let bytes: [UInt8]
    public func makeIterator() -> IndexingIterator<[UInt8]> { bytes.makeIterator() }
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }
}

/// https://developer.apple.com/documentation/cryptokit/hmac
@available(iOS 13.0, macOS 10.15, watchOS 6.0, tvOS 13.0, *)
public struct HMAC<H: HashFunction> {
    /// https://developer.apple.com/documentation/cryptokit/hmac/authenticationcode(for:using:)
    public static func authenticationCode<D: DataProtocol>(for data: D, using key: SymmetricKey)
        -> HashedAuthenticationCode<H>
    {
        guard let algorithm = (H.self as? any OpenSSLHashFunction.Type)?.digestName else {
            preconditionFailure("the stand-in HMAC knows only its own hash functions")
        }
        let message = [UInt8](data)
        var code = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        // One-byte buffers keep the pointers non-null for an empty key or message; the lengths stay 0.
        let keyBytes = key.bytes.isEmpty ? [0] : key.bytes
        let messageBytes = message.isEmpty ? [0] : message
        var length = 0
        let result = EVP_Q_mac(
            nil, "HMAC", nil, algorithm, nil, keyBytes, key.bytes.count, messageBytes, message.count, &code,
            code.count, &length)
        precondition(result != nil, "HMAC failed: only allocation failure can get here")
        return HashedAuthenticationCode(bytes: Array(code.prefix(Int(length))))
    }
}
