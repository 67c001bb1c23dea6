/// Runs `body`, failing with `timeoutError()` if it has not finished after `timeout` on `clock`.
///
/// The body is cancelled when the time runs out; it must react to cancellation (all transport waits
/// do). A result that arrives after the timeout won is dropped, which releases any socket it holds.
func withTimeout<T: Sendable>(
    _ timeout: Duration,
    clock: any Clock<Duration>,
    timeoutError: @escaping @Sendable () -> any Error,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await clock.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw timeoutError() }
        return value
    }
}
