/// A `ByteStream` is an ordered, reliable, bidirectional stream of bytes: plain TCP or TLS.
///
/// Guarantees every implementation keeps:
/// - `read()` returns the next bytes in order, at least one byte, or an empty array once the peer
///   closed its side (end of stream). It waits without blocking a thread, and without any timeout:
///   an idle but healthy connection stays open forever.
/// - `write(_:)` returns once all bytes are handed to the kernel; concurrent writers are serialised,
///   so one call's bytes are never interleaved with another's.
/// - Only one task reads at a time; a second concurrent `read()` throws
///   ``TransportError/concurrentRead``.
/// - `close()` is idempotent and wakes any pending `read()` or `write(_:)` with
///   ``TransportError/closed``.
/// - Cancelling the task of a pending `read()` or `write(_:)` throws `CancellationError`; the stream
///   stays usable for reading only if no bytes were lost (reads lose none; a cancelled write may
///   have sent part of its bytes, so close the stream after cancelling a write).
public protocol ByteStream: AnyObject, Sendable {
    /// Reads the next available bytes; an empty array means the peer closed the stream.
    ///
    /// - Throws: ``TransportError`` when the stream fails or is closed locally, `CancellationError`.
    func read() async throws -> [UInt8]

    /// Writes all of `bytes`, in order.
    ///
    /// - Throws: ``TransportError`` when the stream fails or is closed, `CancellationError`.
    func write(_ bytes: [UInt8]) async throws

    /// Closes the stream in both directions and releases its socket; pending operations fail.
    func close()
}
