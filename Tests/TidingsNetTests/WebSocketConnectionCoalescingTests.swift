import Testing
import TidingsCore

@testable import TidingsNet

/// A `ByteStream` that records every write; the first write waits until `release()` so that
/// later frames pile up in the connection's queue, and writes fail once `failWrites` is set.
private final class RecordingStream: ByteStream, Sendable {
    private struct State {
        var writes: [[UInt8]] = []
        var gateOpen = false
        var gateWaiter: CheckedContinuation<Void, Never>?
        var failWrites = false
        var reader: CheckedContinuation<[UInt8], any Error>?
        var closed = false
    }
    private let state = LockedState(State())

    var writes: [[UInt8]] { state.withLock { $0.writes } }

    func release() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.gateOpen = true
            defer { state.gateWaiter = nil }
            return state.gateWaiter
        }
        waiter?.resume()
    }

    func failWrites() { state.withLock { $0.failWrites = true } }

    func read() async throws -> [UInt8] {
        // Nothing ever arrives: the reader waits until the stream closes.
        try await withCheckedThrowingContinuation { continuation in
            let closed = state.withLock { state -> Bool in
                if state.closed { return true }
                state.reader = continuation
                return false
            }
            if closed { continuation.resume(throwing: TransportError(kind: .closed, operation: "read")) }
        }
    }

    func write(_ bytes: [UInt8]) async throws {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let open = state.withLock { state -> Bool in
                if state.gateOpen { return true }
                state.gateWaiter = continuation
                return false
            }
            if open { continuation.resume() }
        }
        let fail = state.withLock { state -> Bool in
            if !state.failWrites { state.writes.append(bytes) }
            return state.failWrites
        }
        if fail { throw TransportError(kind: .connectionReset, operation: "write") }
    }

    func close() {
        let reader = state.withLock { state -> CheckedContinuation<[UInt8], any Error>? in
            state.closed = true
            defer { state.reader = nil }
            return state.reader
        }
        reader?.resume(throwing: TransportError(kind: .closed, operation: "read"))
    }
}

@Suite(.timeLimit(.minutes(1))) struct WebSocketConnectionCoalescingTests {
    private func makeConnection(over stream: RecordingStream) -> WebSocketConnection {
        let connection = WebSocketConnection(
            stream: stream, configuration: WebSocket.Configuration(pingInterval: nil),
            incoming: BackPressureQueue(limit: 16), logger: .disabled)
        connection.start(leftover: [])
        return connection
    }

    private func decodeAsServer(_ bytes: [UInt8]) throws -> [WebSocketFrame] {
        var decoder = WebSocketFrameDecoder(role: .server)
        decoder.append(bytes)
        var frames: [WebSocketFrame] = []
        while let frame = try decoder.nextFrame() { frames.append(frame) }
        #expect(decoder.bufferedByteCount == 0)
        return frames
    }

    @Test func framesQueuedDuringAWriteGoOutTogetherInOrderAndMasked() async throws {
        let stream = RecordingStream()
        let connection = makeConnection(over: stream)
        defer { connection.abort(WebSocketError(.closed, detail: "test over")) }
        var sent: [WebSocketFrame] = []
        // The first frame's write is held at the gate; the rest queue behind it.
        for index in 0..<300 {
            let payload = (0..<(index % 130)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
            let opcode: WebSocketOpcode = index.isMultiple(of: 3) ? .text : .binary
            let frame = WebSocketFrame(opcode: opcode, payload: opcode == .text ? Array("m\(index)".utf8) : payload)
            try await connection.sendData(opcode: frame.opcode, payload: frame.payload)
            sent.append(frame)
        }
        stream.release()
        // A message at the high-water mark waits until written, and so after every frame before it.
        let big = WebSocketFrame(opcode: .binary, payload: Array(repeating: 0xA5, count: 70_000))
        try await connection.sendData(opcode: .binary, payload: big.payload)
        sent.append(big)

        let writes = stream.writes
        #expect(writes.count < sent.count / 10)
        let wire = writes.flatMap { $0 }
        // The server decoder refuses unmasked frames, and unmasking must restore every payload.
        #expect(try decodeAsServer(wire) == sent)
        #expect(Array(wire.suffix(70_000)) != big.payload)
    }

    @Test func aFailedWriteFailsTheSendsAfterIt() async throws {
        let stream = RecordingStream()
        let connection = makeConnection(over: stream)
        defer { connection.abort(WebSocketError(.closed, detail: "test over")) }
        stream.failWrites()
        try await connection.sendData(opcode: .text, payload: Array("queued".utf8))
        stream.release()
        let error = await #expect(throws: WebSocketError.self) {
            try await connection.sendData(opcode: .binary, payload: Array(repeating: 1, count: 70_000))
        }
        #expect(error == .connectionLost)
        let later = await #expect(throws: WebSocketError.self) {
            try await connection.sendData(opcode: .text, payload: Array("later".utf8))
        }
        #expect(later == .connectionLost)
        #expect(stream.writes.isEmpty)
    }

    @Test func pooledMaskingKeysKeepComingFreshAcrossRefills() {
        var pool = MaskingKeyPool()
        // 200 keys span four refills; 32-bit random keys practically never repeat.
        let keys = (0..<200).map { _ -> UInt32 in
            let key = pool.next()
            return UInt32(key.0) << 24 | UInt32(key.1) << 16 | UInt32(key.2) << 8 | UInt32(key.3)
        }
        #expect(Set(keys).count >= 199)
    }
}
