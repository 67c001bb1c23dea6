import Foundation
import TidingsCore

/// A wall-clock date a test sets by hand, so that what runs on "now" (cookie expiry) runs on test time:
/// pass `{ date.now }` where a `now` closure is taken. Starts at 2027-01-15 08:00 UTC; safe to use from any
/// thread.
public final class TestDate: Sendable {
    private let value = LockedState(Date(timeIntervalSince1970: 1_800_000_000))

    /// A date at the fixed start.
    public init() {}

    /// The current test date.
    public var now: Date { value.withLock { date in date } }

    /// Moves the date forward (or back, for a negative count) by `seconds`.
    public func advance(seconds: TimeInterval) { value.withLock { date in date = date.addingTimeInterval(seconds) } }
}
