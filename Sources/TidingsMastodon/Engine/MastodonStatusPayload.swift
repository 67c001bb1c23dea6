import Foundation
import TidingsCore

/// How the engine stores statuses in the timeline store (whose payloads are opaque bytes): the wire type as
/// JSON, and the merge that keeps the reader's own state when the server sends a new version of a status.
public enum MastodonStatusPayload {
    /// The bytes stored for `status`.
    ///
    /// - Throws: ``MastodonError/decoding`` if the status cannot be encoded (it always can: every field is
    ///   plain data).
    public static func encode(_ status: MastodonStatus) throws(MastodonError) -> Data {
        do { return try JSONEncoder().encode(status) } catch {
            throw .decoding("status \(status.id) could not be encoded")
        }
    }

    /// The status stored in `payload`.
    ///
    /// - Throws: ``MastodonError/decoding`` when the bytes are not a status.
    public static func decode(_ payload: Data) throws(MastodonError) -> MastodonStatus {
        try MastodonWire.decode(MastodonStatus.self, from: payload)
    }

    /// `new` with the reader's own state of `old`: favourite, boost, bookmark, pin, mute and poll vote, for
    /// the status and the one it boosts.
    ///
    /// Why: an edit (`status.update`, a refetch) carries the author's new text, but the reader's state on
    /// this device may be ahead of the server's answer (an optimistic action still pending), and a server
    /// that sends an edit without a token's view (a stream) leaves these fields out.
    public static func keepingReaderState(old: MastodonStatus, new: MastodonStatus) -> MastodonStatus {
        var merged = new
        merged.favourited = old.favourited ?? new.favourited
        merged.reblogged = old.reblogged ?? new.reblogged
        merged.bookmarked = old.bookmarked ?? new.bookmarked
        merged.pinned = old.pinned ?? new.pinned
        merged.muted = old.muted ?? new.muted
        if let oldPoll = old.poll, var poll = merged.poll, oldPoll.id == poll.id, oldPoll.voted == true {
            poll.voted = true
            poll.ownVotes = oldPoll.ownVotes
            merged.poll = poll
        }
        if let oldInner = old.reblog, let newInner = new.reblog, oldInner.id == newInner.id {
            merged.reblog = keepingReaderState(old: oldInner, new: newInner)
        }
        return merged
    }

    /// `new` (the server's answer to the reader's token) with the reader's state of `old` only where `new` says
    /// nothing: a flag that is nil, a poll whose `voted` is nil; for the status and the one it boosts.
    ///
    /// Why: a refetch or a deletion re-check is the server's view and wins where it speaks, but servers that
    /// send the reader's flags as null or leave them out (Pleroma, Akkoma) would otherwise erase a favourite
    /// or bookmark this device knew.
    static func fillingUnknownReaderState(old: MastodonStatus, new: MastodonStatus) -> MastodonStatus {
        var merged = new
        merged.favourited = new.favourited ?? old.favourited
        merged.reblogged = new.reblogged ?? old.reblogged
        merged.bookmarked = new.bookmarked ?? old.bookmarked
        merged.pinned = new.pinned ?? old.pinned
        merged.muted = new.muted ?? old.muted
        if let oldPoll = old.poll, var poll = merged.poll, oldPoll.id == poll.id, poll.voted == nil,
            oldPoll.voted != nil
        {
            poll.voted = oldPoll.voted
            poll.ownVotes = oldPoll.ownVotes
            merged.poll = poll
        }
        if let oldInner = old.reblog, let newInner = new.reblog, oldInner.id == newInner.id {
            merged.reblog = fillingUnknownReaderState(old: oldInner, new: newInner)
        }
        return merged
    }

    /// The store's merge for ``MastodonTimelineStore/edit(account:id:payload:in:merge:)``: decodes both
    /// payloads and keeps the reader's state (see ``keepingReaderState(old:new:)``).
    @Sendable public static func mergeKeepingReaderState(_ old: Data, _ new: Data) throws -> Data {
        try encode(keepingReaderState(old: try decode(old), new: try decode(new)))
    }
}
