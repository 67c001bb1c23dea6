import Testing

@testable import TidingsNet

/// The bounded queue behind every message stream: order, the end, errors and cancellation.
@Suite(.timeLimit(.minutes(1))) struct BackPressureQueueTests {
    struct Failure: Error, Equatable {}

    @Test func queuedElementsComeBeforeTheErrorWhichComesOnce() async throws {
        let queue = BackPressureQueue<Int>(limit: 4)
        queue.enqueue(1)
        queue.enqueue(2)
        queue.finish(throwing: Failure())
        #expect(queue.enqueue(3) == false)
        #expect(try await queue.next() == 1)
        #expect(try await queue.next() == 2)
        await #expect(throws: Failure.self) { _ = try await queue.next() }
        #expect(try await queue.next() == nil)
    }

    @Test func aFullQueueHoldsItsProducerUntilTheConsumerTakesOne() async throws {
        let queue = BackPressureQueue<Int>(limit: 2)
        let producer = Task {
            for value in 0..<10 { await queue.push(value) }
        }
        while queue.count < 2 { try Task.checkCancellation(); await Task.yield() }
        for _ in 0..<1_000 { try Task.checkCancellation(); await Task.yield() }
        #expect(queue.count == 2)
        var received: [Int] = []
        for _ in 0..<10 { received.append(try #require(try await queue.next())) }
        await producer.value
        #expect(received == Array(0..<10))
        #expect(queue.peakCount == 2)
    }

    @Test func aCancelledConsumerSeesTheEndAndOthersStillReceive() async throws {
        let queue = BackPressureQueue<Int>(limit: 4)
        let cancelled = Task { try await queue.next() }
        let waiting = Task { try await queue.next() }
        cancelled.cancel()
        #expect(try await cancelled.value == nil)
        queue.enqueue(7)
        #expect(try await waiting.value == 7)
    }

    @Test func finishingWakesAWaitingProducerAndConsumer() async throws {
        let full = BackPressureQueue<Int>(limit: 1)
        let producer = Task { await full.push(1) && full.count == 1 }
        let empty = BackPressureQueue<Int>(limit: 1)
        let consumer = Task { try await empty.next() }
        while full.count < 1 { try Task.checkCancellation(); await Task.yield() }
        full.finish()
        empty.finish()
        #expect(await producer.value)
        #expect(try await consumer.value == nil)
    }

    @Test func aByteLimitHoldsTheProducerBeforeTheCountLimit() async throws {
        let queue = BackPressureQueue<[UInt8]>(limit: 100, byteLimit: 10, size: { $0.count })
        let producer = Task {
            for value in 0..<6 { await queue.push([UInt8](repeating: UInt8(value), count: 4)) }
        }
        while queue.bufferedBytes.count < 12 {
            try Task.checkCancellation()
            await Task.yield()
        }
        for _ in 0..<1_000 { await Task.yield() }
        // 8 bytes were under the limit, so a third element went in; then the producer waits.
        #expect(queue.count == 3)
        for value in 0..<6 { #expect(try await queue.next() == [UInt8](repeating: UInt8(value), count: 4)) }
        await producer.value
        #expect(queue.bufferedBytes.peak == 12)
        #expect(queue.bufferedBytes.count == 0)
    }
}

/// A batch pushed at once behaves like the same elements pushed one by one.
@Suite(.timeLimit(.minutes(1))) struct BackPressureQueueBatchTests {
    @Test func aBatchKeepsItsOrderAndTheLimit() async throws {
        let queue = BackPressureQueue<Int>(limit: 3)
        let producer = Task { await queue.push(contentsOf: Array(0..<10)) }
        while queue.count < 3 { try Task.checkCancellation(); await Task.yield() }
        for _ in 0..<1_000 { try Task.checkCancellation(); await Task.yield() }
        #expect(queue.count == 3)
        var received: [Int] = []
        for _ in 0..<10 { received.append(try #require(try await queue.next())) }
        #expect(await producer.value)
        #expect(received == Array(0..<10))
        #expect(queue.peakCount == 3)
    }

    @Test func aBatchKeepsTheByteLimit() async throws {
        let queue = BackPressureQueue<[UInt8]>(limit: 100, byteLimit: 10, size: { $0.count })
        let batch = (0..<6).map { [UInt8](repeating: UInt8($0), count: 4) }
        let producer = Task { await queue.push(contentsOf: batch) }
        while queue.bufferedBytes.count < 12 { try Task.checkCancellation(); await Task.yield() }
        for _ in 0..<1_000 { await Task.yield() }
        // As with single pushes: 8 bytes were under the limit, so a third element went in.
        #expect(queue.count == 3)
        for element in batch { #expect(try await queue.next() == element) }
        #expect(await producer.value)
        #expect(queue.bufferedBytes.peak == 12)
    }

    @Test func waitingConsumersGetTheFirstElementsOfABatch() async throws {
        let queue = BackPressureQueue<Int>(limit: 8)
        let consumer = Task { try await queue.next() }
        // The consumer may or may not wait already: either way it gets the first element.
        for _ in 0..<100 { await Task.yield() }
        #expect(await queue.push(contentsOf: [1, 2, 3]))
        #expect(try await consumer.value == 1)
        #expect(try await queue.next() == 2)
        #expect(try await queue.next() == 3)
    }

    @Test func aBatchPushedAfterTheEndIsDroppedAndAnEndedQueueReleasesAWaitingBatch() async throws {
        let ended = BackPressureQueue<Int>(limit: 2)
        ended.finish()
        #expect(await ended.push(contentsOf: [1, 2]) == false)
        #expect(try await ended.next() == nil)

        let full = BackPressureQueue<Int>(limit: 2)
        let producer = Task { await full.push(contentsOf: Array(0..<5)) }
        while full.count < 2 { try Task.checkCancellation(); await Task.yield() }
        full.finish()
        // The two queued before the end are still delivered; the rest were never queued.
        #expect(await producer.value == false)
        #expect(try await full.next() == 0)
        #expect(try await full.next() == 1)
        #expect(try await full.next() == nil)
    }
}
