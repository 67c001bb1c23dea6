import Foundation
@_spi(Fuzzing) import TidingsMastodon

/// Feeds arbitrary bytes to every Mastodon wire decoder the engine uses on a server's answers: a decoder
/// may refuse the input only with `MastodonError`, never crash or throw anything else.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    do {
        _ = try MastodonWireFuzzing.decodeEverything(Data(bytes: data, count: count))
    } catch {
        fatalError("a Mastodon wire decoder threw an untyped error: \(error)")
    }
    return 0
}
