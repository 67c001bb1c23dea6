/// The 4-byte key fingerprint an "OM" content blob carries: 32-bit FNV-1a over the raw chat-key bytes,
/// big-endian.
///
/// It is not a secret-keeping hash (32 bits, unkeyed): it only lets a reader tell "sealed under another
/// key" from "damaged" before trying AES-GCM. The derivation is the public web client's
/// (`glowingkitty/OpenMates`, `frontend/packages/ui/src/services/encryption/MessageEncryptor.ts`,
/// `computeKeyFingerprint4Bytes`, commit d25df2101db8b1131bf4230c45e26d62ed8fde70); see
/// docs/backends/openmates.md.
public enum OpenMatesKeyFingerprint {
    /// The fingerprint's size in bytes.
    public static let byteCount = 4

    /// The fingerprint of `keyBytes`: FNV-1a (offset basis 0x811c9dc5, prime 0x01000193), most significant
    /// byte first.
    public static func of(_ keyBytes: [UInt8]) -> [UInt8] {
        var hash: UInt32 = 0x811c_9dc5
        for byte in keyBytes {
            hash ^= UInt32(byte)
            hash = hash &* 0x0100_0193
        }
        return [
            UInt8(truncatingIfNeeded: hash >> 24), UInt8(truncatingIfNeeded: hash >> 16),
            UInt8(truncatingIfNeeded: hash >> 8), UInt8(truncatingIfNeeded: hash),
        ]
    }
}
