import Foundation
import TidingsCore
import TidingsNet

/// The endpoints the sync engine uses. Each throws ``MastodonError`` (or `CancellationError`).
extension MastodonAPIClient {
    /// `GET /api/v2/instance` (Mastodon 4.0+).
    public func instanceV2() async throws -> MastodonInstanceV2 {
        try await get(MastodonInstanceV2.self, "/api/v2/instance")
    }

    /// `GET /api/v1/instance` (every Mastodon-API server).
    public func instanceV1() async throws -> MastodonInstanceV1 {
        try await get(MastodonInstanceV1.self, "/api/v1/instance")
    }

    /// `GET /api/v1/accounts/verify_credentials`: the account the token signs in as (the reader's own ID).
    public func verifyCredentials() async throws -> MastodonAccount {
        try await get(MastodonAccount.self, "/api/v1/accounts/verify_credentials")
    }

    /// `GET /api/v1/timelines/home` within `range`.
    public func homeTimeline(_ range: MastodonPageRange = MastodonPageRange()) async throws -> MastodonPage<
        MastodonStatus
    > {
        try await page(MastodonStatus.self, "/api/v1/timelines/home", range: range)
    }

    /// `GET /api/v1/timelines/public` within `range`; `local` for this server's posts only.
    public func publicTimeline(local: Bool = false, _ range: MastodonPageRange = MastodonPageRange()) async throws
        -> MastodonPage<MastodonStatus>
    {
        try await page(
            MastodonStatus.self, "/api/v1/timelines/public", range: range, extra: local ? [("local", "true")] : [])
    }

    /// `GET /api/v1/timelines/tag/:hashtag` within `range` (a leading `#` is dropped; the tag is one
    /// percent-encoded path segment); `local` for this server's posts only.
    ///
    /// - Throws: ``MastodonError/badRequest`` for an empty tag, without a request; otherwise as every endpoint.
    public func tagTimeline(
        _ hashtag: String, local: Bool = false, _ range: MastodonPageRange = MastodonPageRange()
    ) async throws -> MastodonPage<MastodonStatus> {
        let tag = hashtag.hasPrefix("#") ? String(hashtag.dropFirst()) : hashtag
        guard !tag.isEmpty else {
            throw MastodonError(.badRequest, endpoint: "/api/v1/timelines/tag", detail: "empty hashtag")
        }
        return try await page(
            MastodonStatus.self, "/api/v1/timelines/tag/\(Self.segment(ServerID(tag)))", range: range,
            extra: local ? [("local", "true")] : [])
    }

    /// `GET /api/v1/timelines/list/:id` within `range`: the posts of the list's members. A list that is not the
    /// reader's (or no longer exists) is ``MastodonError/notFound``.
    public func listTimeline(_ id: ServerID, _ range: MastodonPageRange = MastodonPageRange()) async throws
        -> MastodonPage<MastodonStatus>
    {
        try await page(MastodonStatus.self, "/api/v1/timelines/list/\(Self.segment(id))", range: range)
    }

    /// `GET /api/v1/notifications` within `range`.
    public func notifications(_ range: MastodonPageRange = MastodonPageRange()) async throws
        -> MastodonPage<MastodonNotification>
    {
        try await page(MastodonNotification.self, "/api/v1/notifications", range: range)
    }

    /// `GET /api/v2/notifications` (grouped, Mastodon 4.3+) within `range`; the page's ranges come from `Link`.
    public func groupedNotifications(_ range: MastodonPageRange = MastodonPageRange()) async throws
        -> (results: MastodonGroupedNotifications, older: MastodonPageRange?, newer: MastodonPageRange?)
    {
        let path = "/api/v2/notifications"
        let response = try await send(.get, path, query: range.queryItems)
        let results = try MastodonWire.decode(MastodonGroupedNotifications.self, from: response.body, endpoint: path)
        let links = MastodonPage<Never>(items: [], skipped: 0, response: response, limit: range.limit)
        return (results, links.older, links.newer)
    }

    /// `GET /api/v2/notifications/unread_count`, or the v1 one with `version1`.
    public func unreadCount(version1: Bool = false) async throws -> Int {
        let path = version1 ? "/api/v1/notifications/unread_count" : "/api/v2/notifications/unread_count"
        return try await get(MastodonUnreadCount.self, path).count
    }

    /// `GET /api/v1/markers?timeline[]=home&timeline[]=notifications`.
    public func markers() async throws -> MastodonMarkers {
        try await get(
            MastodonMarkers.self, "/api/v1/markers", query: [("timeline[]", "home"), ("timeline[]", "notifications")])
    }

    /// `POST /api/v1/markers`: saves the given last-read IDs. A version conflict is ``MastodonError/conflict``
    /// (refetch with ``markers()``, merge as the maximum, retry).
    public func saveMarkers(home: ServerID? = nil, notifications: ServerID? = nil) async throws -> MastodonMarkers {
        var form: [(String, String)] = []
        if let home { form.append(("home[last_read_id]", home.rawValue)) }
        if let notifications { form.append(("notifications[last_read_id]", notifications.rawValue)) }
        return try await post(MastodonMarkers.self, "/api/v1/markers", form: form)
    }

    /// `GET /api/v1/statuses?id[]=…` (Mastodon 4.3+): the statuses that still exist among `ids`; deleted
    /// ones are simply missing. At most 20 per request (the server's cap), so longer lists are split.
    public func statuses(ids: [ServerID]) async throws -> [MastodonStatus] {
        var found: [MastodonStatus] = []
        var start = ids.startIndex
        while start < ids.endIndex {
            let end = ids.index(start, offsetBy: 20, limitedBy: ids.endIndex) ?? ids.endIndex
            let query = ids[start..<end].map { ("id[]", $0.rawValue) }
            let response = try await send(.get, "/api/v1/statuses", query: query)
            found += try MastodonWire.decodeList(MastodonStatus.self, from: response.body, endpoint: "/api/v1/statuses")
                .elements
            start = end
        }
        return found
    }

    /// `GET /api/v1/statuses/:id`; a deleted status is ``MastodonError/notFound``.
    public func status(id: ServerID) async throws -> MastodonStatus {
        try await get(MastodonStatus.self, "/api/v1/statuses/\(Self.segment(id))")
    }

    /// An action on a status and its undo.
    public enum StatusAction: String, Sendable, CaseIterable {
        /// Favourite the status.
        case favourite
        /// Take the favourite back.
        case unfavourite
        /// Boost the status.
        case reblog
        /// Take the boost back.
        case unreblog
        /// Bookmark the status.
        case bookmark
        /// Remove the bookmark.
        case unbookmark
        /// Mute the status's conversation.
        case mute
        /// Unmute the status's conversation.
        case unmute
    }

    /// `POST /api/v1/statuses/:id/<action>`: the status as the server now sees it (for `reblog`, the boost
    /// wrapping it).
    public func perform(_ action: StatusAction, status id: ServerID) async throws -> MastodonStatus {
        try await post(MastodonStatus.self, "/api/v1/statuses/\(Self.segment(id))/\(action.rawValue)")
    }

    /// `POST /api/v1/statuses/:id/pin` or `/unpin` (the reader's own posts only; another's is
    /// ``MastodonError/badRequest``): the status as the server now sees it.
    public func setPinned(_ pinned: Bool, status id: ServerID) async throws -> MastodonStatus {
        try await post(MastodonStatus.self, "/api/v1/statuses/\(Self.segment(id))/\(pinned ? "pin" : "unpin")")
    }

    /// `POST /api/v1/polls/:id/votes` with `choices[]` (indices of the poll's options): the poll with the
    /// reader's vote. A second vote or a bad choice is ``MastodonError/badRequest`` (422).
    public func vote(poll id: ServerID, choices: [Int]) async throws -> MastodonPoll {
        try await post(
            MastodonPoll.self, "/api/v1/polls/\(Self.segment(id))/votes",
            form: choices.map { ("choices[]", String($0)) })
    }

    /// `POST /api/v1/accounts/:id/follow` or `/unfollow`; returns whether the reader now follows
    /// (or has requested to follow) the account.
    public func setFollowing(_ follow: Bool, account id: ServerID) async throws -> Bool {
        let relationship = try await relationship(following: follow, account: id)
        return relationship.following || relationship.requested
    }

    /// `POST /api/v1/accounts/:id/follow` or `/unfollow`: the reader's relationship with the account as the
    /// server now sees it (a locked account answers a follow with `requested`).
    public func relationship(following follow: Bool, account id: ServerID) async throws -> MastodonRelationship {
        try await post(
            MastodonRelationship.self, "/api/v1/accounts/\(Self.segment(id))/\(follow ? "follow" : "unfollow")")
    }

    /// An ID as one path segment: anything but unreserved characters is percent-encoded, so an ID from a
    /// server can never add a path segment or a query.
    static func segment(_ id: ServerID) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return id.rawValue.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}
