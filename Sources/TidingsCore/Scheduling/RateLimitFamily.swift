/// A `RateLimitFamily` names a group of endpoints that a server meters with a budget of its own.
///
/// Servers count some requests separately from the rest: Mastodon gives media uploads and status
/// deletions their own per-account budgets, so running out of uploads must not stop a timeline
/// refresh. ``RateBudget`` keeps one budget per host, account and family; requests of unnamed
/// families share ``default``. Families are open-ended: a backend adapter may define its own.
public struct RateLimitFamily: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The family's name; two families are the same exactly when their names are.
    public let rawValue: String

    /// Creates a family from its name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Every request no other family claims (Mastodon: 300 per 5 minutes per account).
    public static let `default` = RateLimitFamily(rawValue: "default")
    /// Media uploads (Mastodon: 30 per 30 minutes per account).
    public static let mediaUploads = RateLimitFamily(rawValue: "mediaUploads")
    /// Status deletions and unreblogs (Mastodon: 30 per 30 minutes per account).
    public static let statusDeletions = RateLimitFamily(rawValue: "statusDeletions")
    /// Account sign-ups (Mastodon: 5 per 30 minutes per IP address).
    public static let accountCreation = RateLimitFamily(rawValue: "accountCreation")

    public var description: String { rawValue }
}
