@_spi(Fuzzing) import TidingsNet

/// Feeds arbitrary bytes to the WebSocket client's handshake-response parser, first as a prefix
/// chosen by the first byte and then whole. Any crash, trap or hang is a bug: a bad response must
/// only ever produce a `WebSocketError`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let first = bytes.first else { return 0 }
    let body = Array(bytes.dropFirst())
    let split = body.isEmpty ? 0 : Int(first) * body.count / 255
    do {
        _ = try WebSocketHandshakeFuzzing.parseResponse(body, split: split)
    } catch {
        _ = error.description
    }
    return 0
}
