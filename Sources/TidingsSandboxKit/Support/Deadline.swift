import Foundation

/// Runs `body`, giving up with nil after `timeout` on the continuous clock (a network deadline, not a
/// schedule: it bounds how long a silent client may hold a server task).
///
/// The body is cancelled when the time runs out; every transport wait reacts to cancellation.
func withDeadline<T: Sendable>(_ timeout: Duration, _ body: @escaping @Sendable () async throws -> T)
    async throws -> T?
{
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { return nil }
        return first
    }
}

/// Waits until the task is cancelled: the "accept and never answer" fault.
func waitUntilCancelled() async {
    let never = AsyncStream<Never> { _ in }
    for await _ in never {}
}
