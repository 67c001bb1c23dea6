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
}

/// An `InMemoryMarkerStorage` keeps markers in a dictionary: for tests, previews and the demo.
public final class InMemoryMarkerStorage: MarkerStorage, @unchecked Sendable {
    private let lock = NSLock()
    private var values: [String: ServerID]

    /// Creates a storage holding `values`.
    public init(_ values: [String: ServerID] = [:]) { self.values = values }

    public func loadMarker(key: String) throws -> ServerID? { lock.withLock { values[key] } }

    public func saveMarker(_ value: ServerID, key: String) throws {
        lock.withLock {
            if let stored = values[key], stored > value { return }
            values[key] = value
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
///
/// For example:
///
/// ```swift
/// let marker = try MonotonicMarker(key: "home.read", storage: storage)
/// try marker.advance(to: "109372890233022")   // true
/// try marker.advance(to: "99")                // false: older, refused
/// ```
public final class MonotonicMarker: @unchecked Sendable {
    /// The storage key.
    public let key: String
    private let storage: any MarkerStorage
    private let logger: Logger
    private let lock = NSLock()
    private var current: ServerID?
    private var refused = 0

    /// Loads the marker's stored value.
    ///
    /// - Throws: Whatever the storage throws while loading.
    public init(key: String, storage: any MarkerStorage, logger: Logger = .disabled) throws {
        self.key = key
        self.storage = storage
        self.logger = logger
        self.current = try storage.loadMarker(key: key)
    }

    /// The current position, `nil` before the first advance.
    public var value: ServerID? { lock.withLock { current } }

    /// How many backward or repeated advances were refused since the marker was loaded.
    public var refusedCount: Int { lock.withLock { refused } }

    /// Moves the marker to `candidate` if it is ahead of the current value, saving it first.
    ///
    /// - Returns: `true` when the marker moved, `false` when `candidate` was not ahead (refused).
    /// - Throws: Whatever the storage throws while saving; the marker does not move then.
    @discardableResult
    public func advance(to candidate: ServerID) throws -> Bool {
        try lock.withLock {
            if let current, candidate <= current {
                refused += 1
                logger.notice("marker \(key) refused to move back from \(current) to \(candidate)")
                return false
            }
            try storage.saveMarker(candidate, key: key)
            current = candidate
            return true
        }
    }
}
