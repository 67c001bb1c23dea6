/// Counts a long-lived connection's reconnect attempts since it last proved healthy, across outages, so that
/// the backoff keeps growing while connections keep dropping early.
///
/// Every reconnecting client shares this rule (the Mastodon user stream's, seed 002): a connection that ends
/// within ``healthyAfter`` of opening did not prove healthy, so the next outage's delays continue from the
/// attempts already made (``ReconnectDriver/run(afterFailures:isolation:attempt:)``) instead of starting again
/// from the base delay. A server that accepts and closes at once then meets 1, 2, 4, … up to the backoff's cap,
/// not a reconnect (and a resync) every second. A connection that stayed up that long starts the count over.
public struct ReconnectHealth: Sendable, Hashable {
    /// How long a connection must stay open to count as healthy (30 s by default).
    public var healthyAfter: Duration
    /// Reconnect attempts made since the last healthy connection (or since the count was reset), each of which
    /// waited one backoff delay.
    public private(set) var attemptsSinceHealthy = 0

    /// A fresh count.
    public init(healthyAfter: Duration = .seconds(30)) {
        self.healthyAfter = healthyAfter
    }

    /// An attempt to connect was made, whether it opened a connection or not.
    public mutating func attemptMade() {
        attemptsSinceHealthy = attemptsSinceHealthy == .max ? .max : attemptsSinceHealthy + 1
    }

    /// A connection that had opened ended after `lifetime`: when it lasted ``healthyAfter`` the count starts over;
    /// otherwise the attempts that led to it still count.
    public mutating func connectionEnded(after lifetime: Duration) {
        if lifetime >= healthyAfter { attemptsSinceHealthy = 0 }
    }

    /// Starts the count over (the app asked to connect now, or the client was started again).
    public mutating func reset() { attemptsSinceHealthy = 0 }
}
