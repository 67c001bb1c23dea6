import TidingsNet

/// libFuzzer entry point: every Engine.IO decoder must turn any bytes into packets or a typed error,
/// and what decodes must survive an encode/decode round trip unchanged.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEngineIOPacket(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: start, count: count))
    let text = String(decoding: bytes, as: UTF8.self)
    for version in [EngineIOVersion.v4, .v3] {
        if let packets = try? EngineIOPayload.decode(bytes, version: version) {
            let again = try? EngineIOPayload.decode(EngineIOPayload.encode(packets, version: version), version: version)
            if again != packets { fatalError("payload round trip changed the packets (\(version))") }
        }
        if let packet = try? EngineIOPacket.decode(.binary(bytes), version: version) {
            let again = try? EngineIOPacket.decode(packet.frame(version: version), version: version)
            if again != packet { fatalError("binary frame round trip changed the packet (\(version))") }
        }
    }
    if let packet = try? EngineIOPacket.decode(text: text) {
        if (try? EngineIOPacket.decode(packet.frame())) != packet { fatalError("text round trip changed the packet") }
    }
    _ = try? EngineIOHandshake(json: text)
    return 0
}
