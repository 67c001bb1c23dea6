import Foundation
import TidingsCore
import TidingsMastodon

extension MastodonNotificationRaiser {
    /// The most `in_reply_to` steps a thread's root is looked for (a cycle or a very long thread ends there).
    static let threadDepthLimit = 64

    /// `candidates` with each conversation taken up its stored `in_reply_to` chain to the oldest post the engine
    /// stored (or the first parent it did not): so every reply of one thread, however deep, shares one thread
    /// identifier, where the parent alone gave each level its own. `parents` are the statuses at hand (the
    /// stored notifications'); others are read from the engine's store.
    func withThreadRoots(_ candidates: [NotificationCandidate], parents: [ServerID: ServerID?]) async
        -> [NotificationCandidate]
    {
        var roots: [ServerID: ServerID] = [:]
        var result = candidates
        for index in result.indices {
            guard let start = result[index].conversationID else { continue }
            if let known = roots[start] {
                result[index].conversationID = known
                continue
            }
            let root = await threadRoot(from: start, parents: parents)
            roots[start] = root
            result[index].conversationID = root
        }
        return result
    }

    private func threadRoot(from start: ServerID, parents: [ServerID: ServerID?]) async -> ServerID {
        var id = start
        var seen: Set<ServerID> = [start]
        for _ in 0..<Self.threadDepthLimit {
            let parent: ServerID?
            if let known = parents[id] {
                parent = known
            } else if let stored = try? await engine.status(id) {
                parent = stored.inReplyToID
            } else {
                break  // not stored: the oldest post known of this thread
            }
            guard let parent, seen.insert(parent).inserted else { break }
            id = parent
        }
        return id
    }
}
