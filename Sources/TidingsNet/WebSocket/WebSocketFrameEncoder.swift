import TidingsCore

/// Encodes WebSocket frames for one side of a connection (RFC 6455 §5.2).
///
/// A client encoder masks every frame with a fresh key from the system's secure random source; a
/// server encoder never masks. The encoder does not police sizes or fragmentation: callers build
/// valid frames (``WebSocketFrame/close(code:reason:)`` keeps close frames within 125 bytes).
public struct WebSocketFrameEncoder: Sendable {
    /// The side this encoder works for.
    public let role: WebSocketRole

    /// Creates an encoder for `role`.
    public init(role: WebSocketRole) { self.role = role }

    /// The wire bytes of `frame`, masked with a random key when ``role`` is `.client`.
    public func encode(_ frame: WebSocketFrame) -> [UInt8] {
        var bytes: [UInt8] = []
        encode(frame, into: &bytes)
        return bytes
    }

    /// Appends the wire bytes of `frame` to `bytes` (masked with a random key when ``role`` is
    /// `.client`), so that queued frames share one buffer and one write.
    public func encode(_ frame: WebSocketFrame, into bytes: inout [UInt8]) {
        guard role == .client else { return Self.encode(frame, maskingKey: nil, into: &bytes) }
        var generator = SystemRandomNumberGenerator()
        let key = UInt32.random(in: .min ... .max, using: &generator)
        Self.encode(
            frame,
            maskingKey: (UInt8(key >> 24), UInt8((key >> 16) & 0xFF), UInt8((key >> 8) & 0xFF), UInt8(key & 0xFF)),
            into: &bytes)
    }

    /// The wire bytes of `frame`, masked with `maskingKey` when one is given.
    public static func encode(_ frame: WebSocketFrame, maskingKey: (UInt8, UInt8, UInt8, UInt8)?) -> [UInt8] {
        var bytes: [UInt8] = []
        encode(frame, maskingKey: maskingKey, into: &bytes)
        return bytes
    }

    /// Appends the wire bytes of `frame` to `bytes`, masked with `maskingKey` when one is given.
    public static func encode(
        _ frame: WebSocketFrame, maskingKey: (UInt8, UInt8, UInt8, UInt8)?, into bytes: inout [UInt8]
    ) {
        let length = frame.payload.count
        // Grow geometrically: reserving just enough for each frame appended to a queue of frames
        // would reallocate (and copy the whole queue) on every frame.
        let needed = bytes.count + length + 14
        if bytes.capacity < needed { bytes.reserveCapacity(max(needed, 2 * bytes.capacity)) }
        bytes.append((frame.fin ? 0x80 : 0) | (frame.reserved & 0x7) << 4 | frame.opcode.rawValue)
        let maskBit: UInt8 = maskingKey == nil ? 0 : 0x80
        switch length {
        case 0...125:
            bytes.append(maskBit | UInt8(length))
        case 126...0xFFFF:
            bytes.append(maskBit | 126)
            bytes.append(UInt8(length >> 8))
            bytes.append(UInt8(length & 0xFF))
        default:
            bytes.append(maskBit | 127)
            let wide = UInt64(length)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8((wide >> UInt64(shift)) & 0xFF)) }
        }
        guard let key = maskingKey else {
            bytes += frame.payload
            return
        }
        bytes.append(key.0)
        bytes.append(key.1)
        bytes.append(key.2)
        bytes.append(key.3)
        // Mask in place after the header: one copy of the payload instead of two.
        let payloadStart = bytes.count
        bytes += frame.payload
        applyMask(key, to: &bytes, from: payloadStart)
    }
}

/// Client masking keys (RFC 6455 §5.3), drawn 64 at a time from the secure random source: one
/// system call per frame was a measurable cost when many small frames are sent.
struct MaskingKeyPool: Sendable {
    private var bytes: [UInt8] = []
    private var index = 0

    /// The next unused key; every key comes from fresh secure random bytes.
    mutating func next() -> (UInt8, UInt8, UInt8, UInt8) {
        if index + 4 > bytes.count {
            bytes = TidingsCrypto.SecureRandom.bytes(256)
            index = 0
        }
        defer { index += 4 }
        return (bytes[index], bytes[index + 1], bytes[index + 2], bytes[index + 3])
    }
}
