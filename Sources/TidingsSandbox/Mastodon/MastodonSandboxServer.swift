import Foundation
import TidingsCore

/// An in-process Mastodon-API server for tests, previews and `tidings sandbox mastodon`: accounts with
/// tokens, statuses, home, public, hashtag and list timelines, notifications, markers, actions, edits and deletes, with
/// the server variants of ``MastodonSandboxVariant``.
///
/// Semantics (as Mastodon's, unless a variant says otherwise):
/// - Timelines are newest first. `max_id` pages back (IDs below it), `since_id` gives the newest above it,
///   `min_id` the oldest above it (still sent newest first); `limit` defaults to 20 and is capped (40; 50
///   for Nextcloud Social). `Link` carries `rel="next"` (`max_id`, only when older items remain) and
///   `rel="prev"` (`min_id`) whenever the page has items.
/// - Home holds the statuses and boosts of the accounts the reader follows and their own, at most
///   ``MastodonSandboxVariant/feedCap`` of the newest; public holds every public status.
/// - Notifications come from mentions, favourites, boosts and follows of the reader's things; v2 groups
///   them by `group_key` (`type-statusID`, or the notification's own ID for follows and mentions).
/// - Markers have versions; ``conflictNextMarkerSaves(_:)`` makes the next saves answer 409.
/// - Each token may make ``MastodonSandboxVariant/requestsPerWindow`` requests per 5 minutes of the
///   server's clock (`X-RateLimit-*` on every answer), then gets 429 with `Retry-After`.
public actor MastodonSandboxServer {
    struct Account {
        var id: String
        var username: String
        var token: String
        var following: Set<String> = []
        /// A locked account answers a follow with a request it has to accept (``acceptFollowRequest(from:to:)``).
        var locked = false
        /// The accounts this one asked to follow that have not accepted yet.
        var requested: Set<String> = []
    }

    struct Status {
        var id: String
        var accountID: String
        var content: String
        var visibility: String
        var createdAt: Date
        var editedAt: Date?
        var reblogOf: String?
        var inReplyTo: String?
        var favouritedBy: Set<String> = []
        var bookmarkedBy: Set<String> = []
        /// Who muted the conversation (kept on the status; replies are not followed to it).
        var mutedBy: Set<String> = []
        /// Whether its author pinned it to their profile (only the author can).
        var pinned = false
        /// Its poll, when it has one.
        var poll: Poll?
        var deleted = false
    }

    struct Notification {
        var id: String
        var recipient: String
        var type: String
        var accountID: String
        var statusID: String?
        var createdAt: Date
    }

    /// The server's variant.
    public private(set) var variant: MastodonSandboxVariant
    var accounts: [Account] = []
    var statuses: [Status] = []
    var notifications: [Notification] = []
    var filters: [Filter] = []
    var lists: [List] = []
    var markers: [String: [String: (id: String, version: Int, updated: Date)]] = [:]
    var markerConflicts = 0
    var nextNumber = 0
    var requestCounts: [String: (windowStart: Date, count: Int)] = [:]
    var streams: [UUID: (accountID: String, continuation: AsyncStream<String>.Continuation)] = [:]
    var streamWaiters: [CheckedContinuation<Void, Never>] = []
    let now: @Sendable () -> Date
    /// The Web Push subscriptions (`/api/v1/push/subscription`), one per token: Sources/TidingsSandbox/Push.
    public nonisolated let pushSubscriptions = MastodonSandboxPushSubscriptions()

    /// An empty server; `now` dates posts and rate-limit windows (derive it from a `TestClock` in tests).
    public init(variant: MastodonSandboxVariant = .mastodon, now: @escaping @Sendable () -> Date = { Date() }) {
        self.variant = variant
        self.now = now
    }

    /// Switches the variant; existing data stays (IDs already given keep their spelling).
    public func setVariant(_ variant: MastodonSandboxVariant) { self.variant = variant }

    /// The status each `Idempotency-Key` created, per account (`account key`): a retried post gets the same.
    var idempotentPosts: [String: String] = [:]

    func nextID() -> String {
        nextNumber += 1
        return MastodonSandboxIDs.id(nextNumber, style: variant.idStyle)
    }

    // MARK: - Seeding and server-side events

    /// Adds an account and returns its ID; `token` is its bearer token.
    @discardableResult
    public func addAccount(username: String, token: String) -> String {
        let id = nextID()
        accounts.append(Account(id: id, username: username, token: token))
        return id
    }

    /// `follower` follows `followed` (and `followed` gets a follow notification); when `followed` is locked, the
    /// follow is a request until it accepts it.
    public func follow(_ follower: String, _ followed: String) {
        guard let index = accounts.firstIndex(where: { $0.id == follower }), follower != followed,
            !accounts[index].following.contains(followed)
        else { return }
        if accounts.first(where: { $0.id == followed })?.locked == true {
            accounts[index].requested.insert(followed)
        } else if accounts[index].following.insert(followed).inserted {
            notify(followed, type: "follow", from: follower, status: nil)
        }
    }

    /// `follower` stops following `followed`, or withdraws its request.
    public func unfollow(_ follower: String, _ followed: String) {
        guard let index = accounts.firstIndex(where: { $0.id == follower }) else { return }
        accounts[index].following.remove(followed)
        accounts[index].requested.remove(followed)
    }

    /// Makes an account locked (follows become requests) or open again.
    public func setLocked(_ account: String, _ locked: Bool) {
        guard let index = accounts.firstIndex(where: { $0.id == account }) else { return }
        accounts[index].locked = locked
    }

    /// `followed` accepts the follow request of `follower`; false when there was none.
    @discardableResult
    public func acceptFollowRequest(from follower: String, to followed: String) -> Bool {
        guard let index = accounts.firstIndex(where: { $0.id == follower }),
            accounts[index].requested.remove(followed) != nil
        else { return false }
        accounts[index].following.insert(followed)
        notify(followed, type: "follow", from: follower, status: nil)
        return true
    }

    /// The viewer's relationship with `id` as Mastodon's `Relationship` (only what clients read here).
    func relationshipJSON(_ viewer: String, _ id: String) -> JSONValue {
        let account = accounts.first { $0.id == viewer }
        return JSONValue.object([
            "id": .string(id), "following": .bool(account?.following.contains(id) ?? false),
            "requested": .bool(account?.requested.contains(id) ?? false),
        ])
    }

    /// Posts a status as `accountID` and returns its ID; `mentioning` accounts get a mention notification;
    /// `poll` gives it a poll with those choices (`multiple`: several may be picked).
    @discardableResult
    public func post(
        as accountID: String, _ content: String, visibility: String = "public", inReplyTo: String? = nil,
        mentioning: [String] = [], poll: [String]? = nil, multiple: Bool = false
    ) -> String {
        let id = nextID()
        var status = Status(
            id: id, accountID: accountID, content: content, visibility: visibility, createdAt: now(),
            inReplyTo: inReplyTo)
        if let poll { status.poll = Poll(id: nextID(), options: poll, multiple: multiple) }
        statuses.append(status)
        streamUpdate(statuses.count - 1, event: "update")
        for mentioned in mentioning { notify(mentioned, type: "mention", from: accountID, status: id) }
        return id
    }

    /// Edits a status's content (sets `edited_at`); false when it does not exist.
    @discardableResult
    public func edit(_ statusID: String, content: String) -> Bool {
        guard let index = liveIndex(statusID) else { return false }
        statuses[index].content = content
        statuses[index].editedAt = now()
        streamUpdate(index, event: "status.update")
        return true
    }

    /// Deletes a status and the boosts of it; false when it did not exist.
    @discardableResult
    public func delete(_ statusID: String) -> Bool {
        guard let index = liveIndex(statusID) else { return false }
        statuses[index].deleted = true
        let everyone = Set(accounts.map(\.id))
        stream("delete", payload: { _ in statusID }, to: everyone)
        for boost in statuses.indices where statuses[boost].reblogOf == statusID && !statuses[boost].deleted {
            statuses[boost].deleted = true
            let boostID = statuses[boost].id
            stream("delete", payload: { _ in boostID }, to: everyone)
        }
        return true
    }

    /// Makes the next `count` marker saves answer 409 (another device saved first).
    public func conflictNextMarkerSaves(_ count: Int) { markerConflicts = max(0, count) }

    /// The number of live statuses (boosts included).
    public var statusCount: Int { statuses.filter { !$0.deleted }.count }

    func notify(_ recipient: String, type: String, from accountID: String, status: String?) {
        guard recipient != accountID else { return }
        let notification = Notification(
            id: nextID(), recipient: recipient, type: type, accountID: accountID, statusID: status, createdAt: now())
        notifications.append(notification)
        streamNotification(notification)
        pushNotification(notification)
    }

    func liveIndex(_ statusID: String) -> Int? {
        statuses.firstIndex { $0.id == statusID && !$0.deleted }
    }

    func account(token: String?) -> Account? {
        guard let token, !token.isEmpty else { return nil }
        return accounts.first { $0.token == token }
    }
}
