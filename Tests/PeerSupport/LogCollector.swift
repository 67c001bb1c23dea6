import TidingsCore

/// The records a test's logger sent, for asserting what was logged (and that no secret was): pass
/// ``append(_:)`` as the `TidingsLogger`'s sink. Safe to use from any thread.
public final class LogCollector: Sendable {
    private let collected = LockedState<[LogRecord]>([])

    /// An empty collector.
    public init() {}

    /// Adds one record; the logger calls it.
    public func append(_ record: LogRecord) { collected.withLock { records in records.append(record) } }

    /// Every record so far, oldest first.
    public var records: [LogRecord] { collected.withLock { records in records } }

    /// The messages of every record so far, oldest first.
    public var messages: [String] { collected.withLock { records in records.map(\.message) } }
}
