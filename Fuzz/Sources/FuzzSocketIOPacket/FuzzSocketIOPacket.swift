import TidingsCore
import TidingsNet

/// libFuzzer entry point: the Socket.IO decoder, the attachment assembler and the JSON parser must
/// turn any input into a value or a typed error, and non-binary packets must round-trip.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSocketIOPacket(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: start, count: count))
    // The first line is the packet text; the other lines are binary attachments.
    let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
    let text = String(decoding: lines.first ?? [], as: UTF8.self)

    if let packet = try? SocketIOPacket.decode(text), packet.attachmentCount == 0,
        packet.kind != .binaryEvent, packet.kind != .binaryAck
    {
        let again = try? SocketIOPacket.decode(packet.encoded().text)
        if again != packet { fatalError("Socket.IO round trip changed the packet") }
    }

    var assembler = SocketIOPacketAssembler()
    _ = try? assembler.receive(text: text)
    for attachment in lines.dropFirst() { _ = try? assembler.receive(binary: Array(attachment)) }

    if let value = try? JSONValue(parsing: bytes) {
        if (try? JSONValue(parsing: value.jsonString())) != value { fatalError("JSON round trip changed the value") }
    }
    return 0
}
