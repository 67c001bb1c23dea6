import Foundation

/// An async semaphore: at most `limit` holders at once, the others suspended (never blocking a thread)
/// in arrival order. Used so that a 2-core machine never boots dozens of Python interpreters at once.
actor StartGate {
    private let limit: Int
    private var holders = 0
    private var queue: [(id: UUID, continuation: CheckedContinuation<Void, any Error>)] = []

    init(limit: Int) { self.limit = max(1, limit) }

    /// Waits for a slot. - Throws: `CancellationError` when the task is cancelled while waiting.
    func acquire() async throws {
        try Task.checkCancellation()
        if holders < limit {
            holders += 1
            return
        }
        let id = UUID()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                queue.append((id, continuation))
            }
        } onCancel: {
            Task { await self.cancel(id) }
        }
    }

    /// Gives a slot back: the next waiter gets it.
    func release() {
        if queue.isEmpty {
            holders = max(0, holders - 1)
        } else {
            queue.removeFirst().continuation.resume()
        }
    }

    private func cancel(_ id: UUID) {
        guard let index = queue.firstIndex(where: { $0.id == id }) else { return }
        queue.remove(at: index).continuation.resume(throwing: CancellationError())
    }

    /// Runs `body` holding a slot; the slot is given back however `body` ends.
    nonisolated func withSlot<Value: Sendable>(_ body: @Sendable () async throws -> Value) async throws -> Value {
        try await acquire()
        do {
            let value = try await body()
            await release()
            return value
        } catch {
            await release()
            throw error
        }
    }
}
