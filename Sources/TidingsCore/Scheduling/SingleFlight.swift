/// A `SingleFlight` merges concurrent requests for the same key into one operation.
///
/// Guarantees:
/// - While an operation for a key is running, every further ``run(key:operation:)`` for that key
///   waits for it and gets the same value or the same error; its own `operation` is not called.
/// - Once the operation has finished, the next call for the key starts a new one (results are not cached).
/// - A cancelled caller stops waiting at once with `CancellationError`; the shared operation keeps
///   running for the others, and is cancelled only when every caller waiting on it has been cancelled.
///
/// For example:
///
/// ```swift
/// let timelines = SingleFlight<String, [Status]>()
/// async let a = timelines.run(key: "home") { try await api.fetchHome() }
/// async let b = timelines.run(key: "home") { try await api.fetchHome() }   // shares a's request
/// ```
public actor SingleFlight<Key: Hashable & Sendable, Value: Sendable> {
    private struct Flight {
        let id: UInt64
        var task: Task<Void, Never>?
        var waiters: [UInt64: CheckedContinuation<Value, any Error>] = [:]
    }

    private var flights: [Key: Flight] = [:]
    private var nextID: UInt64 = 0

    /// Creates an empty group.
    public init() {}

    /// How many operations are running now (one per key at most).
    public var inFlightCount: Int { flights.count }

    /// How many callers are waiting on the operation for `key` (zero when none runs).
    public func callerCount(key: Key) -> Int { flights[key]?.waiters.count ?? 0 }

    /// Runs `operation` for `key`, or joins the one already running for it.
    ///
    /// - Returns: The value of the shared operation.
    /// - Throws: The shared operation's error, or `CancellationError` when this caller is cancelled.
    public func run(key: Key, operation: @escaping @Sendable () async throws -> Value) async throws -> Value {
        try Task.checkCancellation()
        nextID += 1
        let waiterID = nextID
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                join(key: key, waiterID: waiterID, continuation: continuation, operation: operation)
            }
        } onCancel: {
            Task { await self.cancelWaiter(key: key, waiterID: waiterID) }
        }
    }

    private func join(
        key: Key, waiterID: UInt64, continuation: CheckedContinuation<Value, any Error>,
        operation: @escaping @Sendable () async throws -> Value
    ) {
        if flights[key] != nil {
            flights[key]?.waiters[waiterID] = continuation
            return
        }
        nextID += 1
        let flightID = nextID
        flights[key] = Flight(id: flightID, waiters: [waiterID: continuation])
        flights[key]?.task = Task {
            let result: Result<Value, any Error>
            do {
                result = .success(try await operation())
            } catch {
                result = .failure(error)
            }
            self.finish(key: key, flightID: flightID, result: result)
        }
    }

    private func finish(key: Key, flightID: UInt64, result: Result<Value, any Error>) {
        // A flight abandoned by all its callers may finish after a new one started: leave that one alone.
        guard let flight = flights[key], flight.id == flightID else { return }
        flights[key] = nil
        for continuation in flight.waiters.values { continuation.resume(with: result) }
    }

    private func cancelWaiter(key: Key, waiterID: UInt64) {
        guard let continuation = flights[key]?.waiters.removeValue(forKey: waiterID) else { return }
        continuation.resume(throwing: CancellationError())
        if let flight = flights[key], flight.waiters.isEmpty {
            flight.task?.cancel()
            flights[key] = nil
        }
    }
}
