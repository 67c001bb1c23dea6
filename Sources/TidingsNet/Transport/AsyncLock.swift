import TidingsCore

/// A first-in, first-out async mutex: holders may suspend while holding it (unlike `LockedState`, whose closures must not).
///
/// Used to keep whole writes of different tasks from interleaving on one stream.
final class AsyncLock: Sendable {
    private struct State {
        var held = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = LockedState(State())

    init() {}

    func lock() async {
        // Fast path: an uncontended lock costs no continuation.
        let acquired = state.withLock { state -> Bool in
            guard !state.held else { return false }
            state.held = true
            return true
        }
        if acquired { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let acquired = state.withLock { state -> Bool in
                if state.held {
                    state.waiters.append(continuation)
                    return false
                }
                state.held = true
                return true
            }
            if acquired { continuation.resume() }
        }
    }

    func unlock() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.held = false
                return nil
            }
            // Ownership passes straight to the next waiter, which keeps the order fair.
            return state.waiters.removeFirst()
        }
        next?.resume()
    }

    func withLock<T>(_ body: () async throws -> T) async rethrows -> T {
        await lock()
        defer { unlock() }
        return try await body()
    }
}
