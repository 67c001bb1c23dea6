/// An incremental WebSocket frame decoder: append bytes as they arrive, pull whole frames.
///
/// It checks everything RFC 6455 §5 lets a receiver check on a single frame: reserved bits (no
/// extensions are negotiated, so they must be 0), known opcodes, the masking rule for its ``role``
/// (a client refuses masked frames, a server unmasked ones), control frames at most 125 bytes and
/// not fragmented, a 64-bit length with its top bit clear, and ``maximumFrameSize``. A violation
/// throws a ``WebSocketError`` whose `closeCode` is the one to send; after an error the decoder
/// must not be used again. Fragment sequencing and UTF-8 are checked by
/// ``WebSocketMessageAssembler``. For example:
///
/// ```swift
/// var decoder = WebSocketFrameDecoder(role: .client)
/// decoder.append(bytesFromSocket)
/// while let frame = try decoder.nextFrame() { handle(frame) }
/// ```
public struct WebSocketFrameDecoder: Sendable {
    /// The side this decoder works for.
    public let role: WebSocketRole
    /// The largest payload one frame may declare; bigger frames fail before being buffered.
    public let maximumFrameSize: Int
    private var buffer: [UInt8] = []
    private var readIndex = 0

    /// Creates a decoder for `role` refusing frames larger than `maximumFrameSize` payload bytes.
    public init(role: WebSocketRole, maximumFrameSize: Int = 16 * 1024 * 1024) {
        self.role = role
        self.maximumFrameSize = max(125, maximumFrameSize)
    }

    /// How many received bytes wait to be decoded.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Adds received bytes.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        // Drop consumed bytes before growing, so the buffer holds at most about one frame.
        if readIndex > 0, readIndex >= buffer.count / 2 {
            buffer.removeSubrange(0..<readIndex)
            readIndex = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Returns the next complete frame, or `nil` when more bytes are needed.
    ///
    /// - Throws: ``WebSocketError`` with kind `protocolViolation` or `messageTooBig`.
    public mutating func nextFrame() throws(WebSocketError) -> WebSocketFrame? {
        let available = buffer.count - readIndex
        guard available >= 2 else { return nil }
        let first = buffer[readIndex]
        let second = buffer[readIndex + 1]
        let fin = first & 0x80 != 0
        let reserved = (first >> 4) & 0x7
        guard reserved == 0 else {
            throw WebSocketError(.protocolViolation, detail: "reserved bits \(reserved) set without an extension")
        }
        guard let opcode = WebSocketOpcode(rawValue: first & 0x0F) else {
            throw WebSocketError(.protocolViolation, detail: "unknown opcode \(first & 0x0F)")
        }
        let masked = second & 0x80 != 0
        switch (role, masked) {
        case (.client, true): throw WebSocketError(.protocolViolation, detail: "the server sent a masked frame")
        case (.server, false): throw WebSocketError(.protocolViolation, detail: "the client sent an unmasked frame")
        default: break
        }
        let shortLength = Int(second & 0x7F)
        if opcode.isControl {
            guard fin else { throw WebSocketError(.protocolViolation, detail: "fragmented \(opcode) frame") }
            guard shortLength <= 125 else {
                throw WebSocketError(.protocolViolation, detail: "\(opcode) frame longer than 125 bytes")
            }
        }
        var headerLength = 2
        var payloadLength: UInt64
        switch shortLength {
        case 126:
            headerLength += 2
            guard available >= headerLength else { return nil }
            payloadLength = UInt64(buffer[readIndex + 2]) << 8 | UInt64(buffer[readIndex + 3])
        case 127:
            headerLength += 8
            guard available >= headerLength else { return nil }
            payloadLength = 0
            for index in 0..<8 { payloadLength = payloadLength << 8 | UInt64(buffer[readIndex + 2 + index]) }
            guard payloadLength >> 63 == 0 else {
                throw WebSocketError(.protocolViolation, detail: "64-bit length with the most significant bit set")
            }
        default:
            payloadLength = UInt64(shortLength)
        }
        guard payloadLength <= UInt64(maximumFrameSize) else {
            throw WebSocketError(
                .messageTooBig, detail: "frame of \(payloadLength) bytes exceeds the limit of \(maximumFrameSize)")
        }
        let length = Int(payloadLength)
        let maskOffset = readIndex + headerLength
        if masked { headerLength += 4 }
        guard available >= headerLength + length else { return nil }
        let payloadStart = readIndex + headerLength
        var payload = Array(buffer[payloadStart..<(payloadStart + length)])
        if masked {
            let key = (
                buffer[maskOffset], buffer[maskOffset + 1], buffer[maskOffset + 2], buffer[maskOffset + 3]
            )
            applyMask(key, to: &payload)
        }
        readIndex = payloadStart + length
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            readIndex = 0
        }
        return WebSocketFrame(fin: fin, reserved: reserved, opcode: opcode, payload: payload)
    }
}

/// XORs `bytes[start...]` with the 4-byte masking key (RFC 6455 §5.3), the key's first byte
/// falling on `start`; applying it twice restores the input.
func applyMask(_ key: (UInt8, UInt8, UInt8, UInt8), to bytes: inout [UInt8], from start: Int = 0) {
    let keyBytes = (key.0, key.1, key.2, key.3)
    func keyByte(_ index: Int) -> UInt8 {
        switch index & 3 {
        case 0: keyBytes.0
        case 1: keyBytes.1
        case 2: keyBytes.2
        default: keyBytes.3
        }
    }
    bytes.withUnsafeMutableBufferPointer { buffer in
        let count = buffer.count - start
        guard count > 0, let base = UnsafeMutableRawPointer(buffer.baseAddress)?.advanced(by: start) else { return }
        var index = 0
        // Eight bytes at a time: masking a 1 MiB message byte by byte is measurably slow.
        if count >= 8 {
            var word: UInt64 = 0
            withUnsafeMutableBytes(of: &word) { raw in
                for offset in 0..<8 { raw[offset] = keyByte(offset) }
            }
            while index + 8 <= count {
                let value = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                base.storeBytes(of: value ^ word, toByteOffset: index, as: UInt64.self)
                index += 8
            }
        }
        while index < count {
            let value = base.load(fromByteOffset: index, as: UInt8.self)
            base.storeBytes(of: value ^ keyByte(index), toByteOffset: index, as: UInt8.self)
            index += 1
        }
    }
}
