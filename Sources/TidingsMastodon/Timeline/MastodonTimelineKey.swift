import TidingsCore

/// A `MastodonTimelineKey` names one cached timeline of one signed-in account.
///
/// Two keys are equal when both the account and the timeline name are; the store keeps each key's entries
/// and position counter apart.
public struct MastodonTimelineKey: Sendable, Hashable, CustomStringConvertible {
    /// The app's stable identifier of the signed-in account (never a token).
    public var account: String
    /// The timeline's name: `home`, `public`, `local`, `tag:swift`, `list:42`, …
    public var timeline: String

    /// Names `timeline` of `account`.
    public init(account: String, timeline: String) {
        self.account = account
        self.timeline = timeline
    }

    /// The home timeline's name; it has its own, larger retention.
    public static let homeTimeline = "home"

    /// The prefix of a hashtag timeline's name (`tag:swift`: `GET /api/v1/timelines/tag/swift`).
    public static let tagPrefix = "tag:"
    /// The prefix of a list timeline's name (`list:42`: `GET /api/v1/timelines/list/42`).
    public static let listPrefix = "list:"

    /// The name of the timeline of `hashtag` (without its `#`).
    public static func tag(_ hashtag: String) -> String { tagPrefix + hashtag }

    /// The name of the timeline of the list `id`.
    public static func list(_ id: ServerID) -> String { listPrefix + id.rawValue }

    /// The home timeline of `account`.
    public static func home(account: String) -> MastodonTimelineKey {
        MastodonTimelineKey(account: account, timeline: homeTimeline)
    }

    /// Whether this is an account's home timeline.
    public var isHome: Bool { timeline == Self.homeTimeline }

    /// `timeline@account`, for logs.
    public var description: String { "\(timeline)@\(account)" }
}
