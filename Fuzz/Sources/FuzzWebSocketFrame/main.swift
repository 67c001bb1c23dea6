import TidingsNet

/// Feeds arbitrary bytes to the client- and server-role frame decoders, split at a point chosen by
/// the first byte, and every decoded data frame to the message assembler. Any crash, trap or hang
/// is a bug: bad input must only ever produce a `WebSocketError`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let first = bytes.first else { return 0 }
    let body = Array(bytes.dropFirst())
    let split = body.isEmpty ? 0 : Int(first) % (body.count + 1)
    for role in [WebSocketRole.client, .server] {
        var decoder = WebSocketFrameDecoder(role: role, maximumFrameSize: 1 << 16)
        var assembler = WebSocketMessageAssembler(maximumMessageSize: 1 << 17)
        decoder.append(body[..<split])
        decoder.append(body[split...])
        do {
            while let frame = try decoder.nextFrame() {
                if frame.opcode == .close {
                    _ = try frame.closeStatus()
                } else if !frame.opcode.isControl {
                    _ = try assembler.push(frame)
                }
                // Re-encoding must round-trip through a decoder of the other role.
                let encoded = WebSocketFrameEncoder(role: role == .client ? .server : .client).encode(frame)
                var echo = WebSocketFrameDecoder(role: role, maximumFrameSize: 1 << 16)
                echo.append(encoded)
                if try echo.nextFrame() != frame { fatalError("round trip changed the frame") }
            }
        } catch {
            _ = error.description
        }
    }
    return 0
}
