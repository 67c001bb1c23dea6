/// A stream that can tell "nothing to read right now" apart from waiting for bytes.
///
/// A reader that drains a socket with ``readWithoutWaiting()`` until it runs dry can hand what it
/// decoded from several back-to-back reads to its consumer at once, instead of waking the consumer
/// after every read (one read often holds a single small message when a fast peer streams them).
protocol NonBlockingReading: ByteStream {
    /// The bytes the stream holds now (at least one), `nil` when a read would have to wait, or an
    /// empty array at the end of the stream. Never suspends or blocks.
    ///
    /// - Throws: ``TransportError`` when the stream failed or was closed.
    func readWithoutWaiting() throws(TransportError) -> [UInt8]?

    /// Waits until bytes may have arrived since ``readWithoutWaiting()`` returned `nil` (a spurious
    /// return only costs one more `nil`).
    ///
    /// - Throws: ``TransportError`` when the stream failed or was closed, `CancellationError`.
    func waitUntilReadable() async throws
}

extension TCPConnection: NonBlockingReading {}
