/// Requests made while a connection is being reopened, each waiting up to its own deadline for it.
///
/// Guarantees: each wait ends exactly once — true from ``resumeAll(reconnected:)`` with `true`;
/// false from it with `false`, when its deadline passes on the injected clock, or when its task is
/// cancelled. Its timer is cancelled with it, so no sleeper outlives its wait.
public final class ReconnectWaiters: Sendable {
    private let waits: OneShotWaits<Bool>

    /// Creates an empty set of waiters whose deadlines run on `clock`.
    public init(clock: any Clock<Duration>) {
        self.waits = OneShotWaits(clock: clock, keys: 0...UInt64.max)
    }

    /// How many tasks are waiting.
    public var count: Int { waits.count }

    /// Waits until the connection is back (true) or `limit` passes (false).
    ///
    /// The wait is registered before this function first suspends, so a caller that checked its
    /// connection state on its actor cannot miss a ``resumeAll(reconnected:)`` made after the check.
    public func wait(atMost limit: Duration, isolation: isolated (any Actor)? = #isolation) async -> Bool {
        // A table of 2^64 keys is never full.
        guard let key = waits.reserve() else { return false }
        waits.expire(key, after: limit, with: false)
        return await waits.wait(key, cancelled: false)
    }

    /// Ends every wait: `true` when the connection is open again, `false` when none is coming.
    public func resumeAll(reconnected: Bool) {
        waits.finishAll(with: reconnected)
    }
}
