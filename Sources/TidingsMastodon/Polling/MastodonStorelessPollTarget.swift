import TidingsCore

/// `MastodonStorelessPollTarget` answers the polling scheduler's calls with ``MastodonAPIClient`` alone
/// and stores nothing: it remembers only the newest ID it saw per timeline and of notifications, so
/// its `min_id` requests are the ones a real engine would make.
///
/// It is **not** the account's sync engine (which conforms to ``MastodonPollTarget`` with its store,
/// gaps and markers): it exists so the scheduler can be measured and shown against a real server or
/// the sandbox (benchmark M1, the demo, the scheduler's sandbox tests).
///
/// Guarantees: each call makes one request, except the first unread count on a server without the v2
/// endpoint (a `404` there, then v1 from then on); `home`, `public` and `local` are polled, any other
/// timeline fails with ``MastodonError/unsupported`` without a request.
public actor MastodonStorelessPollTarget: MastodonPollTarget {
    /// The client every call goes through.
    public let client: MastodonAPIClient
    private var newest: [String: ServerID] = [:]
    private var newestNotification: ServerID?
    private var unreadVersion1 = false
    /// Statuses and notifications seen so far (new ones only, by `min_id`).
    public private(set) var itemsSeen = 0

    /// A target over one account's client.
    public init(client: MastodonAPIClient) { self.client = client }

    /// `GET /api/v2/notifications/unread_count`, or v1 once v2 answered 404.
    public func pollUnreadCount() async throws -> Int {
        if !unreadVersion1 {
            do {
                return try await client.unreadCount()
            } catch MastodonError.notFound {
                unreadVersion1 = true
            }
        }
        return try await client.unreadCount(version1: true)
    }

    /// `home`, `public` or `local` with `min_id` = the newest status seen on it.
    public func pollTimeline(_ timeline: String) async throws {
        let range = MastodonPageRange(minID: newest[timeline], limit: 40)
        let page: MastodonPage<MastodonStatus>
        switch timeline {
        case MastodonTimelineKey.homeTimeline: page = try await client.homeTimeline(range)
        case "public": page = try await client.publicTimeline(range)
        case "local": page = try await client.publicTimeline(local: true, range)
        default: throw MastodonError(.unsupported, detail: "timeline \(timeline)")
        }
        itemsSeen += page.items.count
        if let top = page.items.map(\.id).max() { newest[timeline] = max(top, newest[timeline] ?? top) }
    }

    /// Never: it reads one page per poll and keeps no timeline to catch up.
    public func hasTimelineBacklog(_ timeline: String) -> Bool { false }

    /// `GET /api/v1/notifications` with `min_id` = the newest notification seen.
    public func pollNotifications() async throws {
        let page = try await client.notifications(MastodonPageRange(minID: newestNotification, limit: 40))
        itemsSeen += page.items.count
        if let top = page.items.map(\.id).max() {
            newestNotification = max(top, newestNotification ?? top)
        }
    }
}
