import TidingsCore

/// A growing list that tasks can wait on until it holds `count` items or a deadline passes: the deliveries a
/// sandbox sent, the messages a push endpoint received.
final class SandboxPushWaiters<Item: Sendable>: Sendable {
    private struct Waiter {
        let count: Int
        let continuation: CheckedContinuation<Void, Never>
    }
    private struct State {
        var items: [Item] = []
        var waiters: [UInt64: Waiter] = [:]
        var nextWaiter: UInt64 = 0
    }
    private let state = LockedState(State())

    var items: [Item] { state.withLock { $0.items } }

    func append(_ item: Item) {
        let ready: [CheckedContinuation<Void, Never>] = state.withLock { locked in
            locked.items.append(item)
            let done = locked.waiters.filter { $0.value.count <= locked.items.count }
            for key in done.keys { locked.waiters.removeValue(forKey: key) }
            return done.values.map(\.continuation)
        }
        for continuation in ready { continuation.resume() }
    }

    /// The items once there are at least `count`, or what there is when `timeout` passes first.
    func wait(for count: Int, timeout: Duration) async -> [Item] {
        let id = state.withLock { locked in
            locked.nextWaiter += 1
            return locked.nextWaiter
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            self.release(id)
        }
        defer { timer.cancel() }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let satisfied = state.withLock { locked in
                if locked.items.count >= count { return true }
                locked.waiters[id] = Waiter(count: count, continuation: continuation)
                return false
            }
            if satisfied { continuation.resume() }
        }
        return items
    }

    private func release(_ id: UInt64) {
        let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
        waiter?.continuation.resume()
    }
}
