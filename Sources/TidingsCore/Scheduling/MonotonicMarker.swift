import Foundation

/// `MarkerStorage` persists marker values by key (for example "read position of the home timeline").
///
/// Implementations must make `saveMarker` durable before returning, must be safe to call from any
/// thread, and must never move a stored marker backwards (they may keep a greater stored value,
/// e.g. one written by another process).
public protocol MarkerStorage: Sendable {
    /// The stored value for `key`, or `nil` if none was ever saved.
    func loadMarker(key: String) throws -> ServerID?
    /// Stores `value` for `key` unless a greater value is already stored.
    func saveMarker(_ value: ServerID, key: String) throws
    /// Stores `value` for `key` unless a greater value is already stored, and returns what is stored
    /// afterwards: `value`, or the greater value another writer (another process) stored first.
    func saveMarkerKeepingMaximum(_ value: ServerID, key: String) throws -> ServerID
}

extension MarkerStorage {
    /// Saves, then loads: right for a storage only this process writes. A storage shared between processes
    /// should do both in one transaction.
    public func saveMarkerKeepingMaximum(_ value: ServerID, key: String) throws -> ServerID {
        try saveMarker(value, key: key)
        return try loadMarker(key: key) ?? value
    }
}

/// What ``MonotonicMarker/advanceReporting(to:)`` did.
public enum MarkerAdvance: Sendable, Equatable {
    /// The marker moved to the candidate.
    case moved
    /// The candidate was not ahead of the marker's value; nothing changed.
    case refused
    /// Another writer (another process sharing the store) had already stored this greater value; the marker
    /// now holds it, and the candidate is behind it.
    case overtaken(by: ServerID)
}

/// An `InMemoryMarkerStorage` keeps markers in a dictionary: for tests, previews and the demo.
public final class InMemoryMarkerStorage: MarkerStorage, Sendable {
    private struct State {
        var values: [String: ServerID]
    }
    private let state: LockedState<State>

    /// Creates a storage holding `values`.
    public init(_ values: [String: ServerID] = [:]) { state = LockedState(State(values: values)) }

    public func loadMarker(key: String) throws -> ServerID? { state.withLock { locked in locked.values[key] } }

    public func saveMarker(_ value: ServerID, key: String) throws {
        _ = try saveMarkerKeepingMaximum(value, key: key)
    }

    public func saveMarkerKeepingMaximum(_ value: ServerID, key: String) throws -> ServerID {
        state.withLock { locked in
            if let stored = locked.values[key], stored > value { return stored }
            locked.values[key] = value
            return value
        }
    }
}

/// A `MonotonicMarker` is a persisted position that only moves forward in ``ServerID`` order.
///
/// Guarantees:
/// - ``advance(to:)`` moves the marker only to a strictly greater ID, and only after the storage
///   saved it; if saving throws, the marker keeps its old value.
/// - An attempt to move backwards (or to the same ID) changes nothing, throws nothing, and is
///   reported: it returns `false`, logs a notice and counts in ``refusedCount``.
/// - Calls are serialised by a lock, so concurrent advances never lose the larger value. The API is
///   synchronous on purpose: an engine actor calls it without a suspension point.
/// - Across processes sharing the storage: when another process stored a greater value, an advance to a
///   smaller candidate reports it (``MarkerAdvance/overtaken(by:)``, `false` from ``advance(to:)``) and the
///   marker takes the stored maximum, so it never shows a value behind the store.
///
/// For example:
///
/// ```swift
/// let marker = try MonotonicMarker(key: "home.read", storage: storage)
/// try marker.advance(to: "109372890233022")   // true
/// try marker.advance(to: "99")                // false: older, refused
/// ```
public final class MonotonicMarker: Sendable {
    /// The storage key.
    public let key: String
    private let storage: any MarkerStorage
    private let logger: TidingsLogger
    private struct State {
        var current: ServerID?
        var refused = 0
    }
    private let state: LockedState<State>

    /// Loads the marker's stored value.
    ///
    /// - Throws: Whatever the storage throws while loading.
    public init(key: String, storage: any MarkerStorage, logger: TidingsLogger = .disabled) throws {
        self.key = key
        self.storage = storage
        self.logger = logger
        self.state = LockedState(State(current: try storage.loadMarker(key: key)))
    }

    /// The current position, `nil` before the first advance.
    public var value: ServerID? { state.withLock { locked in locked.current } }

    /// How many backward or repeated advances were refused since the marker was loaded.
    public var refusedCount: Int { state.withLock { locked in locked.refused } }

    /// Moves the marker to `candidate` if it is ahead of the current value, saving it first.
    ///
    /// - Returns: `true` when the marker moved to `candidate`; `false` when `candidate` was not ahead (refused)
    ///   or another process had stored a greater value (the marker now holds that value).
    /// - Throws: Whatever the storage throws while saving; the marker does not move then.
    @discardableResult
    public func advance(to candidate: ServerID) throws -> Bool {
        try advanceReporting(to: candidate) == .moved
    }

    /// Moves the marker like ``advance(to:)``, and says which of the three outcomes happened.
    ///
    /// - Throws: Whatever the storage throws while saving; the marker does not move then.
    public func advanceReporting(to candidate: ServerID) throws -> MarkerAdvance {
        try state.withLock { locked in
            if let current = locked.current, candidate <= current {
                locked.refused += 1
                logger.notice("marker \(key) refused to move back from \(current) to \(candidate)")
                return .refused
            }
            let stored = try storage.saveMarkerKeepingMaximum(candidate, key: key)
            if stored > candidate {
                logger.notice("marker \(key) was already at \(stored), ahead of \(candidate), in the storage")
                locked.current = stored
                return .overtaken(by: stored)
            }
            locked.current = candidate
            return .moved
        }
    }
}
