import Foundation
import TidingsCore

/// Whether a gap can still be loaded.
public enum MastodonGapState: Int64, Sendable, Equatable {
    /// The statuses between its neighbours have not been fetched yet; loading it pages inward.
    case open = 0
    /// The server no longer returns what lies between its neighbours (its feed cap): the hole stays, and is
    /// shown as one, never as a continuous timeline.
    case unfillable = 1
}

/// One row of a cached timeline, in the timeline's own order.
///
/// Entries of one timeline have distinct positions; a larger position is newer, and the statuses' IDs rise
/// with their positions (`ServerID` order).
public struct MastodonTimelineEntry: Sendable, Equatable {
    /// What an entry stands for.
    public enum Content: Sendable, Equatable {
        /// A cached status.
        case status(ServerID)
        /// Statuses the server has between this entry's neighbours that are not cached.
        case gap(MastodonGapState)
    }

    /// The entry's place in its timeline's counter (not a date).
    public var position: Int64
    /// The status or the gap.
    public var content: Content

    /// An entry at `position`.
    public init(position: Int64, content: Content) {
        self.position = position
        self.content = content
    }

    /// The status ID, or `nil` for a gap.
    public var statusID: ServerID? {
        if case .status(let id) = content { return id }
        return nil
    }

    /// Whether this entry is a gap.
    public var isGap: Bool { statusID == nil }
}

/// A status as the store holds it: its opaque payload (e.g. the status JSON), opened when sealed.
public struct MastodonStoredStatus: Sendable, Equatable {
    /// The server's ID.
    public var id: ServerID
    /// The bytes the app stored (plaintext; the store seals them at rest when it has a cipher).
    public var payload: Data
    /// Whether an edit replaced the payload since it was first stored.
    public var edited: Bool
}
