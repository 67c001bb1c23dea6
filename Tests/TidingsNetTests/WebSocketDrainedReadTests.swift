import Foundation
import Testing
import TidingsCore

@testable import TidingsNet

#if canImport(Glibc)
    import Glibc
#endif

/// A stream that the test fills chunk by chunk. While chunks are loaded, reads return them one at a
/// time without waiting; then `readWithoutWaiting` says "nothing now" and `waitUntilReadable` waits for
/// the next `load`. Each read that returns a chunk records how many consumers were parked on `queue`
/// at that moment, which shows whether the reader woke its consumer in between.
private final class ScriptedStream: NonBlockingReading, Sendable {
    private struct State {
        var chunks: [[UInt8]] = []
        var waiter: CheckedContinuation<Void, any Error>?
        var closed = false
        var parkedAtEachRead: [Int] = []
    }
    private let state = LockedState(State())
    private let queue: LockedState<BackPressureQueue<WebSocketMessage>?> = LockedState(nil)

    func observe(_ queue: BackPressureQueue<WebSocketMessage>) { self.queue.withLock { $0 = queue } }

    var parkedAtEachRead: [Int] { state.withLock { $0.parkedAtEachRead } }

    /// Makes `chunks` readable back to back and wakes a waiting reader.
    func load(_ chunks: [[UInt8]]) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            state.chunks += chunks
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    func readWithoutWaiting() throws(TransportError) -> [UInt8]? {
        let parked = queue.withLock { $0?.waitingConsumerCount ?? 0 }
        return try state.withLock { state throws(TransportError) -> [UInt8]? in
            if state.closed { throw TransportError(kind: .closed, operation: "read") }
            guard !state.chunks.isEmpty else { return nil }
            state.parkedAtEachRead.append(parked)
            return state.chunks.removeFirst()
        }
    }

    func waitUntilReadable() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome = state.withLock { state -> Bool? in
                if state.closed { return false }
                if !state.chunks.isEmpty { return true }
                state.waiter = continuation
                return nil
            }
            switch outcome {
            case true?: continuation.resume()
            case false?: continuation.resume(throwing: TransportError(kind: .closed, operation: "read"))
            case nil: break
            }
        }
    }

    func read() async throws -> [UInt8] {
        while true {
            if let bytes = try readWithoutWaiting() { return bytes }
            try await waitUntilReadable()
        }
    }

    func write(_ bytes: [UInt8]) async throws {}

    func close() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            state.closed = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(throwing: TransportError(kind: .closed, operation: "read"))
    }
}

/// A reader that drains its socket hands the messages of back-to-back reads to a waiting consumer
/// together, once the socket runs dry (or the held messages reach their limit), instead of waking the
/// consumer after every read; what the consumer sees does not change.
@Suite(.timeLimit(.minutes(1))) struct WebSocketDrainedReadTests {
    /// One server text frame per chunk: "m<i>" for every i in `range`.
    private func chunks(_ range: Range<Int>) -> [[UInt8]] {
        range.map {
            WebSocketFrameEncoder(role: .server).encode(WebSocketFrame(opcode: .text, payload: Array("m\($0)".utf8)))
        }
    }

    /// A connection over `stream` whose consumer is parked waiting for `count` messages.
    /// The consumer's task returns what it received and the error that ended the stream early, if any.
    private func start(over stream: ScriptedStream, collecting count: Int) async throws -> (
        WebSocketConnection, Task<([WebSocketMessage], (any Error)?), Never>
    ) {
        let queue = BackPressureQueue<WebSocketMessage>(limit: 256)
        stream.observe(queue)
        let connection = WebSocketConnection(
            stream: stream, configuration: WebSocket.Configuration(pingInterval: nil), incoming: queue,
            logger: .disabled)
        connection.start(leftover: [])
        let messages = queue.makeStream()
        let consumer = Task { () -> ([WebSocketMessage], (any Error)?) in
            var received: [WebSocketMessage] = []
            do {
                for try await message in messages {
                    received.append(message)
                    if received.count == count { break }
                }
            } catch {
                return (received, error)
            }
            return (received, nil)
        }
        while queue.waitingConsumerCount == 0 { try Task.checkCancellation(); await Task.yield() }
        return (connection, consumer)
    }

    @Test func messagesReadBackToBackReachAWaitingConsumerInOneHandOver() async throws {
        let stream = ScriptedStream()
        let (connection, consumer) = try await start(over: stream, collecting: 10)
        defer { connection.abort(WebSocketError(.closed, detail: "test over")) }
        stream.load(chunks(0..<10))
        let (received, error) = await consumer.value
        #expect(error == nil)
        #expect(received == (0..<10).map { .text("m\($0)") })
        // The consumer stayed parked through every read: nothing woke it before the socket ran dry.
        #expect(stream.parkedAtEachRead == Array(repeating: 1, count: 10))
    }

    @Test func aLongBurstIsHandedOverEveryHeldMessageLimitMessages() async throws {
        let stream = ScriptedStream()
        let limit = WebSocketConnection.heldMessageLimit
        let (connection, consumer) = try await start(over: stream, collecting: 3 * limit)
        defer { connection.abort(WebSocketError(.closed, detail: "test over")) }
        stream.load(chunks(0..<(3 * limit)))
        let (received, error) = await consumer.value
        #expect(error == nil)
        #expect(received == (0..<(3 * limit)).map { .text("m\($0)") })
        let parked = stream.parkedAtEachRead
        #expect(parked.count == 3 * limit)
        // Held messages never wait for the socket to run dry beyond the limit: the first `limit` reads
        // found the consumer parked, and the read after them found it woken.
        #expect(parked.prefix(limit).allSatisfy { $0 == 1 })
        #expect(parked.dropFirst(limit).first == 0)
    }

    @Test func heldMessagesComeBeforeTheEndOfTheStream() async throws {
        let stream = ScriptedStream()
        let (connection, consumer) = try await start(over: stream, collecting: 6)
        defer { connection.abort(WebSocketError(.closed, detail: "test over")) }
        // Five messages, then the end of the stream in the same run of reads.
        stream.load(chunks(0..<5) + [[]])
        let (received, error) = await consumer.value
        #expect(received == (0..<5).map { .text("m\($0)") })
        #expect((error as? WebSocketError) == .connectionLost)
    }

    #if canImport(Glibc)
        @Test func readWithoutWaitingTellsNothingNowFromBytesAndTheEnd() async throws {
            var descriptors: [Int32] = [-1, -1]
            #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &descriptors) == 0)
            #expect(configureSocket(descriptors[0]) == 0)
            #expect(configureSocket(descriptors[1]) == 0)
            let reader = TCPConnection(channel: SocketChannel(descriptor: descriptors[0]), remoteHost: "a")
            let writer = TCPConnection(channel: SocketChannel(descriptor: descriptors[1]), remoteHost: "b")
            defer { reader.close() }
            #expect(try reader.readWithoutWaiting() == nil)
            try await writer.write(Array("hi".utf8))
            try await reader.waitUntilReadable()
            #expect(try reader.readWithoutWaiting() == Array("hi".utf8))
            #expect(try reader.readWithoutWaiting() == nil)
            writer.close()
            try await reader.waitUntilReadable()
            #expect(try reader.readWithoutWaiting() == [])
            reader.close()
            #expect(throws: TransportError.closed) { try reader.readWithoutWaiting() }
        }
    #endif
}
