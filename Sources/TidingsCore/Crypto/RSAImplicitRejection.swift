/// `RSAImplicitRejection` decodes a PKCS#1 v1.5 encryption block without a padding oracle.
///
/// A block whose padding is invalid does not fail: it decodes to a synthetic message derived from
/// the private key and the ciphertext, so the same block always gives the same bytes and nobody
/// without the key can tell a synthetic message from a real one, neither by the result nor by the
/// time taken. This is the implicit rejection of draft-irtf-cfrg-rsa-guidance, bit for bit what
/// OpenSSL 3.2 and later do (the fixture `rsa-implicit-rejection.json` checks it against them); the
/// OpenSSL backend uses it when the library is older than 3.2.
///
/// Secret-dependent choices are made with masks instead of branches or secret-indexed reads; only
/// the length of the result steers a loop, and that length is revealed by the result anyway.
enum RSAImplicitRejection {
    /// The message in `encoded` (the raw RSA decryption of `ciphertext`) or the synthetic one; both
    /// secret inputs are overwritten with zeros before it returns.
    ///
    /// - Parameters:
    ///   - encoded: `ciphertext^d mod n`, big-endian, exactly as long as the modulus.
    ///   - privateExponent: `d`, big-endian, left-padded to the modulus length.
    ///   - ciphertext: The block as received, exactly as long as the modulus.
    static func message(encoded: inout [UInt8], privateExponent: inout [UInt8], ciphertext: [UInt8]) -> [UInt8] {
        var kdk = keyDerivationKey(privateExponent: privateExponent, ciphertext: ciphertext)
        let message = decode(encoded, kdk: kdk)
        wipe(&encoded)
        wipe(&privateExponent)
        wipe(&kdk)
        return message
    }

    /// Overwrites secret bytes before the array's memory is released.
    static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buffer in
            for index in buffer.indices { buffer[index] = 0 }
        }
    }

    /// The key derivation key: HMAC-SHA256 keyed with SHA-256 of the private exponent `d` (big-endian,
    /// padded to the modulus length) over the ciphertext (padded the same way).
    static func keyDerivationKey(privateExponent: [UInt8], ciphertext: [UInt8]) -> [UInt8] {
        TidingsCrypto.HMACSHA256.authenticationCode(for: ciphertext, key: TidingsCrypto.SHA256.hash(privateExponent))
    }

    /// `byteCount` pseudo-random bytes: HMAC-SHA256(kdk, be16(counter) ‖ label ‖ be16(bits)) blocks.
    static func pseudoRandomBytes(_ kdk: [UInt8], label: String, byteCount: Int) -> [UInt8] {
        // Modulus lengths are at most 512 bytes (4096 bits), so the bit count fits in 16 bits.
        let bitCount = UInt16(truncatingIfNeeded: byteCount * 8)
        var output: [UInt8] = []
        output.reserveCapacity(byteCount + TidingsCrypto.HMACSHA256.byteCount)
        var counter: UInt16 = 0
        while output.count < byteCount {
            let input =
                [UInt8(counter >> 8), UInt8(counter & 0xFF)] + Array(label.utf8)
                + [UInt8(bitCount >> 8), UInt8(bitCount & 0xFF)]
            output += TidingsCrypto.HMACSHA256.authenticationCode(for: input, key: kdk)
            counter &+= 1
        }
        return Array(output.prefix(byteCount))
    }

    /// The message inside `encoded` (the raw RSA decryption, modulus-length, at least 11 bytes) when
    /// it is `00 02 PS 00 M` with at least 8 bytes of non-zero `PS`; otherwise the synthetic message.
    static func decode(_ encoded: [UInt8], kdk: [UInt8]) -> [UInt8] {
        let count = encoded.count
        guard count >= 11 else { return [] }
        let synthetic = pseudoRandomBytes(kdk, label: "message", byteCount: count)

        // The synthetic length: the last of 128 16-bit candidates, masked to the bit length of the
        // longest possible message, that is shorter than it (0 if none is, a 2^-128 chance).
        let candidates = pseudoRandomBytes(kdk, label: "length", byteCount: 128 * 2)
        let longest = UInt32(count - 2 - 8)
        var lengthMask = longest
        lengthMask |= lengthMask >> 1
        lengthMask |= lengthMask >> 2
        lengthMask |= lengthMask >> 4
        lengthMask |= lengthMask >> 8
        var syntheticLength: UInt32 = 0
        for index in stride(from: 0, to: candidates.count, by: 2) {
            let candidate = (UInt32(candidates[index]) << 8 | UInt32(candidates[index + 1])) & lengthMask
            syntheticLength = CT.select(CT.lessThan(candidate, longest), candidate, syntheticLength)
        }

        var good = CT.isZero(UInt32(encoded[0])) & CT.equal(UInt32(encoded[1]), 2)
        var foundZero: UInt32 = 0
        var zeroIndex: UInt32 = 0
        for index in 2..<count {
            let isZero = CT.isZero(UInt32(encoded[index]))
            zeroIndex = CT.select(~foundZero & isZero, UInt32(index), zeroIndex)
            foundZero |= isZero
        }
        // At least 8 bytes of padding string after `00 02`; no zero at all leaves zeroIndex at 0.
        good &= ~CT.lessThan(zeroIndex, 2 + 8)

        let start = Int(CT.select(good, zeroIndex + 1, UInt32(count) - syntheticLength))
        var message = [UInt8](repeating: 0, count: count - start)
        let goodByte = UInt8(truncatingIfNeeded: good)
        for index in start..<count {
            // Both sources are read at every index, so the access pattern does not depend on `good`.
            message[index - start] = (goodByte & encoded[index]) | (~goodByte & synthetic[index])
        }
        return message
    }

    /// Branch-free comparisons returning all-ones or all-zeros masks.
    private enum CT {
        static func mostSignificantBit(_ value: UInt32) -> UInt32 { 0 &- (value >> 31) }
        static func isZero(_ value: UInt32) -> UInt32 { mostSignificantBit(~value & (value &- 1)) }
        static func equal(_ lhs: UInt32, _ rhs: UInt32) -> UInt32 { isZero(lhs ^ rhs) }
        static func lessThan(_ lhs: UInt32, _ rhs: UInt32) -> UInt32 {
            mostSignificantBit(lhs ^ ((lhs ^ rhs) | ((lhs &- rhs) ^ rhs)))
        }
        static func select(_ mask: UInt32, _ yes: UInt32, _ no: UInt32) -> UInt32 { (mask & yes) | (~mask & no) }
    }
}
