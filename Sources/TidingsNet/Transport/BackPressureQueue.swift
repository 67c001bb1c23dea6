import TidingsCore

/// A first-in, first-out queue from one reading loop to one consuming task, with back-pressure.
///
/// The reader ``push(_:)``es what it decoded and is suspended while ``limit`` elements (or, with a
/// byte limit, that many bytes) wait, so it stops reading its socket; the kernel's receive window then
/// pushes back on the server. Memory is bounded by `limit` elements and by the byte limit plus one
/// element, instead of growing with everything a fast server sends to a slow consumer.
///
/// Elements queued before ``finish(throwing:)`` are still delivered, then the end (or the error, once).
/// A consumer whose task is cancelled sees the end of the sequence, like `AsyncThrowingStream`.
final class BackPressureQueue<Element: Sendable>: Sendable {
    private struct State {
        var elements: [Element] = []
        var head = 0
        var ended = false
        var failure: (any Error)?
        /// Consumers waiting for an element, in arrival order; normally at most one (a second
        /// iterator in another task gets the elements after it, never a lost wake-up).
        var consumers: [(id: UInt64, continuation: CheckedContinuation<Element?, any Error>)] = []
        var nextConsumerID: UInt64 = 0
        var producer: CheckedContinuation<Void, Never>?
        var peak = 0
        var bytes = 0
        var peakBytes = 0

        var count: Int { elements.count - head }
    }

    /// How many elements may wait before ``push(_:)`` suspends the reader.
    let limit: Int
    /// How many bytes (as `size` counts them) may wait before ``push(_:)`` suspends the reader.
    let byteLimit: Int
    private let size: @Sendable (Element) -> Int
    private let state = LockedState(State())

    /// A queue that suspends its reader while `limit` (at least 1) elements wait, or while `byteLimit`
    /// bytes wait as measured by `size` (no byte limit by default).
    init(limit: Int, byteLimit: Int = .max, size: @escaping @Sendable (Element) -> Int = { _ in 0 }) {
        self.limit = max(1, limit)
        self.byteLimit = max(1, byteLimit)
        self.size = size
    }

    /// Bytes waiting for the consumer now, and the most that ever waited.
    var bufferedBytes: (count: Int, peak: Int) { state.withLock { ($0.bytes, $0.peakBytes) } }

    /// Elements waiting for the consumer now.
    var count: Int { state.withLock { $0.count } }

    /// The most elements that ever waited at once.
    var peakCount: Int { state.withLock { $0.peak } }

    /// The consumer's side as an `AsyncThrowingStream`; iterate it from one task.
    func makeStream() -> AsyncThrowingStream<Element, any Error> {
        AsyncThrowingStream(unfolding: { try await self.next() })
    }

    /// The consumer's side as an `AsyncStream` (an error ends it like a normal finish).
    func makeNonThrowingStream() -> AsyncStream<Element> {
        AsyncStream(unfolding: { try? await self.next() })
    }

    /// Queues `element`, then waits while the queue is full (or until it ends or the task is cancelled).
    ///
    /// - Returns: `false` when the queue had already ended and the element was dropped.
    @discardableResult
    func push(_ element: Element) async -> Bool {
        guard enqueue(element) else { return false }
        await waitForSpace()
        return true
    }

    /// Queues `elements` in order exactly as that many ``push(_:)`` calls would, but takes the lock
    /// and wakes the consumer once per run of elements that fit instead of once per element: a reader
    /// that decoded many messages from one socket read hands them over together.
    ///
    /// Between runs it waits while the queue is full, so the limits hold as they do for ``push(_:)``.
    ///
    /// - Returns: `false` when the queue ended before every element was queued (the rest are dropped).
    @discardableResult
    func push(contentsOf elements: [Element]) async -> Bool {
        var index = elements.startIndex
        while index < elements.endIndex {
            var handoffs: [(CheckedContinuation<Element?, any Error>, Element)] = []
            let accepted = state.withLock { state -> Bool in
                guard !state.ended else { return false }
                // As push does: each element goes in, then the run stops once the queue is full.
                repeat {
                    let element = elements[index]
                    index += 1
                    if !state.consumers.isEmpty {
                        // A waiting consumer means the queue is empty: hand the element over directly.
                        handoffs.append((state.consumers.removeFirst().continuation, element))
                        continue
                    }
                    state.elements.append(element)
                    state.bytes += size(element)
                } while index < elements.endIndex && Self.hasSpace(state, limit: limit, byteLimit: byteLimit)
                state.peak = max(state.peak, state.count)
                state.peakBytes = max(state.peakBytes, state.bytes)
                return true
            }
            for (consumer, element) in handoffs { consumer.resume(returning: element) }
            guard accepted else { return false }
            await waitForSpace()
        }
        return true
    }

    /// Queues `element` without waiting, for rare events that must not block their sender; the
    /// limit still applies to the next ``push(_:)`` or ``waitForSpace()``.
    ///
    /// - Returns: `false` when the queue had already ended and the element was dropped.
    @discardableResult
    func enqueue(_ element: Element) -> Bool {
        let elementSize = size(element)
        let (accepted, consumer) = state.withLock { state -> (Bool, CheckedContinuation<Element?, any Error>?) in
            guard !state.ended else { return (false, nil) }
            if !state.consumers.isEmpty {
                // A waiting consumer means the queue is empty: hand the element over directly.
                return (true, state.consumers.removeFirst().continuation)
            }
            state.elements.append(element)
            state.bytes += elementSize
            state.peak = max(state.peak, state.count)
            state.peakBytes = max(state.peakBytes, state.bytes)
            return (true, nil)
        }
        consumer?.resume(returning: element)
        return accepted
    }

    /// Waits until fewer than ``limit`` elements and ``byteLimit`` bytes wait, the queue ended, or the task is cancelled.
    func waitForSpace() async {
        // Usually there is space: answer without a continuation or a cancellation handler.
        if state.withLock({ $0.ended || Self.hasSpace($0, limit: limit, byteLimit: byteLimit) }) { return }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (producer: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.ended || Self.hasSpace(state, limit: limit, byteLimit: byteLimit) || Task.isCancelled {
                        return true
                    }
                    state.producer = producer
                    return false
                }
                if resumeNow { producer.resume() }
            }
        } onCancel: {
            let producer = state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.producer = nil }
                return state.producer
            }
            producer?.resume()
        }
    }

    private static func hasSpace(_ state: State, limit: Int, byteLimit: Int) -> Bool {
        state.count < limit && state.bytes < byteLimit
    }

    /// The next element; `nil` after the end (or when the consumer's task is cancelled).
    ///
    /// - Throws: the error the queue finished with, once, after every element queued before it.
    func next() async throws -> Element? {
        // Fast path: something is queued (or the queue ended), so no continuation is needed. A reader
        // that queued a batch wakes its consumer once; the rest of the batch is taken here.
        let (ready, producer, id) = state.withLock {
            state -> (Result<Element?, any Error>?, CheckedContinuation<Void, Never>?, UInt64) in
            if let (result, producer) = take(&state) { return (result, producer, 0) }
            state.nextConsumerID += 1
            return (nil, nil, state.nextConsumerID)
        }
        producer?.resume()
        if let ready { return try ready.get() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (consumer: CheckedContinuation<Element?, any Error>) in
                let (result, producer) = state.withLock {
                    state -> (Result<Element?, any Error>?, CheckedContinuation<Void, Never>?) in
                    if let taken = take(&state) { return taken }
                    if Task.isCancelled { return (.success(nil), nil) }
                    state.consumers.append((id, consumer))
                    return (nil, nil)
                }
                producer?.resume()
                if let result { consumer.resume(with: result) }
            }
        } onCancel: {
            let consumer = state.withLock { state -> CheckedContinuation<Element?, any Error>? in
                guard let index = state.consumers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.consumers.remove(at: index).continuation
            }
            consumer?.resume(returning: nil)
        }
    }

    /// Takes the head element (with the producer to wake when that made space) or, once the queue
    /// ended and is empty, the end or the error (once); `nil` when the consumer must wait.
    private func take(
        _ state: inout State
    ) -> (Result<Element?, any Error>, CheckedContinuation<Void, Never>?)? {
        if state.count > 0 {
            let element = state.elements[state.head]
            state.bytes -= size(element)
            state.head += 1
            if state.head == state.elements.count {
                state.elements.removeAll(keepingCapacity: true)
                state.head = 0
            } else if state.head >= 1024, state.head * 2 >= state.elements.count {
                state.elements.removeFirst(state.head)
                state.head = 0
            }
            var producer: CheckedContinuation<Void, Never>?
            if Self.hasSpace(state, limit: limit, byteLimit: byteLimit) {
                producer = state.producer
                state.producer = nil
            }
            return (.success(element), producer)
        }
        if state.ended {
            defer { state.failure = nil }
            if let failure = state.failure { return (.failure(failure), nil) }
            return (.success(nil), nil)
        }
        return nil
    }

    /// Ends the queue: the consumer gets what is queued, then the end or `error`; a waiting reader
    /// resumes and later pushes are dropped. Idempotent (the first call decides).
    func finish(throwing error: (any Error)? = nil) {
        let (consumers, producer) = state.withLock {
            state -> ([CheckedContinuation<Element?, any Error>], CheckedContinuation<Void, Never>?) in
            guard !state.ended else { return ([], nil) }
            state.ended = true
            // Waiting consumers mean nothing is queued: the first gets the error, any others the end.
            state.failure = state.consumers.isEmpty ? error : nil
            defer {
                state.consumers = []
                state.producer = nil
            }
            return (state.consumers.map(\.continuation), state.producer)
        }
        producer?.resume()
        for (index, consumer) in consumers.enumerated() {
            if index == 0, let error { consumer.resume(throwing: error) } else { consumer.resume(returning: nil) }
        }
    }
}
