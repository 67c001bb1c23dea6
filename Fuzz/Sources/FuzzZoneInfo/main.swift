@_spi(Fuzzing) import TidingsPush

/// Feeds arbitrary bytes to the TZif reader behind the notification policy's local time (`ZoneInfo`, RFC 8536)
/// and to the POSIX TZ string parser; what they accept must keep the promises `ZoneInfoFuzzing.check` lists
/// (offsets within ±26 h, transitions that move forward and change the offset, wall-clock readings that resolve
/// to an instant showing them or ending a gap). A refusal is a `ZoneInfoError` by construction (typed throws).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = [UInt8](UnsafeBufferPointer(start: data, count: count))
    if let broken = ZoneInfoFuzzing.check(bytes) { fatalError(broken) }
    return 0
}
