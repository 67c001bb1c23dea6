import Foundation
import TidingsCore
import TidingsMastodon

/// Whom the reader follows, as far as the digest's exception needs it: one account's answer from
/// `GET /api/v1/accounts/relationships` and when it was read.
struct FollowedEntry: Sendable {
    var following: Bool
    var checked: Date
}

extension MastodonNotificationRaiser {
    /// How long an answer of `GET /api/v1/accounts/relationships` is trusted; a follow or unfollow action of
    /// this account replaces it at once.
    public static let followedTimeToLive: TimeInterval = 6 * 3600
    /// Mastodon's limit of `id[]` per relationships request.
    static let relationshipsBatch = 40

    /// Whether the digest's exception for followed accounts is on: only then are relationships asked for.
    var asksWhomTheReaderFollows: Bool {
        if case .digest(_, let urgent) = configuration.settings.delivery, urgent, configuration.settings.isDigest {
            return true
        }
        return false
    }

    /// The candidates with `author.isFollowed` set for the mentions whose author the reader follows, when the
    /// digest lets followed mentions through (otherwise unchanged, and nothing is asked). Answers older than
    /// ``followedTimeToLive`` are asked again, in batches of 40; a failed request keeps the older answer, or
    /// counts the author as not followed (the mention then waits for the digest, it is never lost).
    func withFollowedAuthors(_ candidates: [NotificationCandidate]) async -> [NotificationCandidate] {
        guard asksWhomTheReaderFollows else { return candidates }
        let now = clock.now
        let wanted = candidates.filter { $0.category.isMention && !$0.isPrivateMention }.compactMap(\.author?.id)
        var stale: [ServerID] = []
        for id in wanted where !stale.contains(id) {
            if let entry = followedCache[id], now.timeIntervalSince(entry.checked) < Self.followedTimeToLive {
                continue
            }
            stale.append(id)
        }
        var start = 0
        while start < stale.count {
            let batch = Array(stale[start..<min(start + Self.relationshipsBatch, stale.count)])
            start += batch.count
            guard let answers = try? await relationships(batch) else { continue }
            for (id, following) in answers { followedCache[id] = FollowedEntry(following: following, checked: now) }
        }
        return candidates.map { candidate in
            guard candidate.category.isMention, let id = candidate.author?.id else { return candidate }
            var candidate = candidate
            candidate.author?.isFollowed = followedCache[id]?.following ?? false
            return candidate
        }
    }

    /// `GET /api/v1/accounts/relationships?id[]=…` through the engine's client (token, rate budget, errors).
    private func relationships(_ ids: [ServerID]) async throws -> [(ServerID, Bool)] {
        let response = try await engine.client.send(
            .get, "/api/v1/accounts/relationships", query: ids.map { ("id[]", $0.rawValue) })
        let list = try JSONValue(parsing: response.body)
        guard case .array(let items) = list else { return [] }
        return items.compactMap { item in
            guard let id = item["id"]?.identifierValue, ids.contains(ServerID(id)) else { return nil }
            return (ServerID(id), item["following"]?.boolValue ?? false)
        }
    }

    /// A follow or unfollow of this account was confirmed by the server: the answer is known without asking.
    func relationshipChanged(_ pending: MastodonPendingAction) {
        guard pending.action.targetsAccount else { return }
        followedCache[pending.target] = FollowedEntry(following: pending.action == .follow, checked: clock.now)
    }

    /// The cached answer for `id` (tests and diagnostics).
    func cachedFollowing(_ id: ServerID) -> Bool? { followedCache[id]?.following }
}
