/// Converts RSA keys between PKCS#1 and the wrapped forms PEM files carry: SubjectPublicKeyInfo
/// (RFC 5280 §4.1) for public keys and PKCS#8 (RFC 5208) for private keys.
///
/// Apple's Security framework speaks only PKCS#1, so the Apple backend wraps and unwraps with this;
/// it is plain Swift so the Linux tests check it against OpenSSL's own encodings.
enum RSAKeyDER {
    /// AlgorithmIdentifier { rsaEncryption (1.2.840.113549.1.1.1), NULL }.
    static let rsaEncryptionAlgorithm: [UInt8] = [
        0x30, 0x0D, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01, 0x05, 0x00,
    ]

    static func subjectPublicKeyInfo(wrapping pkcs1: [UInt8]) -> [UInt8] {
        element(0x30, rsaEncryptionAlgorithm + element(0x03, [0x00] + pkcs1))
    }

    static func pkcs8(wrapping pkcs1: [UInt8]) -> [UInt8] {
        element(0x30, [0x02, 0x01, 0x00] + rsaEncryptionAlgorithm + element(0x04, pkcs1))
    }

    static func pkcs1PublicKey(fromSubjectPublicKeyInfo der: [UInt8]) throws(CryptoError) -> [UInt8] {
        var outer = Reader(der)
        var info = Reader(try outer.read(tag: 0x30))
        guard outer.isAtEnd else { throw .invalidKey("bytes after SubjectPublicKeyInfo") }
        try checkAlgorithm(info.read(tag: 0x30))
        let bits = try info.read(tag: 0x03)
        guard bits.first == 0x00, bits.count > 1 else { throw .invalidKey("public key BIT STRING has unused bits") }
        return Array(bits.dropFirst())
    }

    static func pkcs1PrivateKey(fromPKCS8 der: [UInt8]) throws(CryptoError) -> [UInt8] {
        var outer = Reader(der)
        var info = Reader(try outer.read(tag: 0x30))
        guard outer.isAtEnd else { throw .invalidKey("bytes after PrivateKeyInfo") }
        let version = try info.read(tag: 0x02)
        guard version == [0x00] || version == [0x01] else { throw .invalidKey("unknown PKCS#8 version") }
        try checkAlgorithm(info.read(tag: 0x30))
        return try info.read(tag: 0x04)
    }

    /// The private exponent `d` of a PKCS#1 `RSAPrivateKey` (RFC 8017 §A.1.2), big-endian and
    /// left-padded to `byteCount` bytes, for implicit rejection on the Apple backend.
    static func privateExponent(fromPKCS1 der: [UInt8], byteCount: Int) throws(CryptoError) -> [UInt8] {
        var outer = Reader(der)
        var key = Reader(try outer.read(tag: 0x30))
        guard try key.read(tag: 0x02) == [0x00] else { throw .invalidKey("not a two-prime PKCS#1 private key") }
        _ = try key.read(tag: 0x02)  // n
        _ = try key.read(tag: 0x02)  // e
        let exponent = Array(try key.read(tag: 0x02).drop { $0 == 0 })
        guard !exponent.isEmpty, exponent.count <= byteCount else { throw .invalidKey("private exponent out of range") }
        return [UInt8](repeating: 0, count: byteCount - exponent.count) + exponent
    }

    private static func checkAlgorithm(_ content: [UInt8]) throws(CryptoError) {
        var algorithm = Reader(content)
        let oid = try algorithm.read(tag: 0x06)
        guard oid == Array(rsaEncryptionAlgorithm[4..<13]) else { throw .invalidKey("not an RSA key") }
    }

    /// One DER element: tag, definite length, content.
    static func element(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var length: [UInt8] = []
        if content.count < 0x80 {
            length = [UInt8(content.count)]
        } else {
            var count = content.count
            while count > 0 {
                length.insert(UInt8(count & 0xFF), at: 0)
                count >>= 8
            }
            length.insert(0x80 | UInt8(length.count), at: 0)
        }
        return [tag] + length + content
    }

    /// Reads DER elements one after another, checking every length against the bytes left.
    struct Reader {
        private let bytes: [UInt8]
        private var offset = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var isAtEnd: Bool { offset == bytes.count }

        mutating func read(tag expected: UInt8) throws(CryptoError) -> [UInt8] {
            guard offset + 2 <= bytes.count else { throw .invalidKey("DER truncated") }
            guard bytes[offset] == expected else {
                throw .invalidKey("DER tag \(bytes[offset]) where \(expected) was expected")
            }
            var length = Int(bytes[offset + 1])
            offset += 2
            if length >= 0x80 {
                let lengthBytes = length & 0x7F
                // Keys never need more than 3 length bytes; 0 would be BER's indefinite length.
                guard (1...3).contains(lengthBytes), offset + lengthBytes <= bytes.count else {
                    throw .invalidKey("DER length unsupported")
                }
                length = 0
                for _ in 0..<lengthBytes {
                    length = length << 8 | Int(bytes[offset])
                    offset += 1
                }
            }
            guard length <= bytes.count - offset else { throw .invalidKey("DER length past the end") }
            defer { offset += length }
            return Array(bytes[offset..<offset + length])
        }
    }
}
