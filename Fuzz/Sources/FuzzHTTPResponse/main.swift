@_spi(Fuzzing) import TidingsNet

/// Feeds arbitrary bytes to the polling pool's HTTP/1.1 response parser in pieces whose sizes come
/// from the first byte (whose high bit makes it the answer to a HEAD request), then ends the connection
/// (cleanly, then not). Any crash, trap or hang is a
/// bug: bad input must only ever produce an `EngineIOError`; a response must never claim more body
/// than the input held, nor exceed the body limit.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let first = bytes.first else { return 0 }
    let body = Array(bytes.dropFirst())
    let step = Int(first % 32) + 1
    let toHEAD = first & 0x80 != 0
    let limit = 1024
    for cleanEnd in [true, false] {
        var parser = HTTPResponseParser(maximumBodySize: limit, responseToHEAD: toHEAD)
        var offset = 0
        var response: HTTPResponseParser.Response?
        do {
            while response == nil, offset < body.count {
                let end = min(offset + step, body.count)
                parser.append(body[offset..<end])
                offset = end
                response = try parser.next()
            }
            if response == nil { response = try parser.finish(cleanEnd: cleanEnd) }
        } catch {
            _ = error.description
        }
        if let response {
            if response.body.count > limit || response.body.count > body.count { fatalError("body too large") }
            if !(100...599).contains(response.status) { fatalError("impossible status") }
            if toHEAD, !response.body.isEmpty { fatalError("a body in the answer to a HEAD request") }
        }
    }
    return 0
}
