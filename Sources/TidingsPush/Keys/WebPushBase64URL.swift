import Foundation

/// Base64url (RFC 4648 §5), the alphabet Web Push uses for keys, salts and auth secrets.
///
/// Encoding never pads. Decoding accepts the value with or without `=` padding (Mastodon and browsers
/// write it without, some servers with), and refuses anything else: whitespace, the `+`/`/` alphabet, a
/// length that no byte string encodes to, padding in the middle, or unused bits that are not zero.
public enum WebPushBase64URL {
    /// The unpadded base64url text of `bytes`.
    public static func encode(_ bytes: [UInt8]) -> String {
        // Byte by byte, not `replacingOccurrences`: that goes through NSString and CoreFoundation, whose start-up
        // pages are part of the decrypt path's peak memory (issue 12's P2).
        let standard = Data(bytes).base64EncodedData()
        return String(
            decoding: standard.compactMap { byte -> UInt8? in
                switch byte {
                case UInt8(ascii: "+"): UInt8(ascii: "-")
                case UInt8(ascii: "/"): UInt8(ascii: "_")
                case UInt8(ascii: "="): nil
                default: byte
                }
            }, as: UTF8.self)
    }

    /// The bytes `text` encodes.
    ///
    /// - Throws: ``WebPushError/invalidParameter`` naming `what` (never echoing `text`, which may be a secret)
    ///   when `text` is not base64url.
    public static func decode(_ text: String, what: String = "value") throws(WebPushError) -> [UInt8] {
        var body = Substring(text)
        while body.hasSuffix("=") { body = body.dropLast() }
        // Two or more padding characters are only ever needed for a length of 2 mod 4.
        let padding = text.count - body.count
        guard padding <= 2 else { throw .with(.invalidParameter, "\(what) is not base64url (padding)") }
        let allowed = body.utf8.allSatisfy { byte in
            (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                || byte == 0x2D || byte == 0x5F
        }
        guard allowed else { throw .with(.invalidParameter, "\(what) is not base64url (character)") }
        // A remainder of 1 encodes no whole byte.
        guard body.utf8.count % 4 != 1 else { throw .with(.invalidParameter, "\(what) is not base64url (length)") }
        if padding > 0, (body.utf8.count + padding) % 4 != 0 {
            throw .with(.invalidParameter, "\(what) is not base64url (padding)")
        }
        var standard = body.utf8.map { byte in
            byte == UInt8(ascii: "-") ? UInt8(ascii: "+") : byte == UInt8(ascii: "_") ? UInt8(ascii: "/") : byte
        }
        standard += repeatElement(UInt8(ascii: "="), count: (4 - standard.count % 4) % 4)
        guard let data = Data(base64Encoded: Data(standard)) else {
            throw .with(.invalidParameter, "\(what) is not base64url")
        }
        let bytes = [UInt8](data)
        // Unused low bits in the last character must be zero: otherwise several texts name one value.
        guard encode(bytes) == body else { throw .with(.invalidParameter, "\(what) is not canonical base64url") }
        return bytes
    }
}
