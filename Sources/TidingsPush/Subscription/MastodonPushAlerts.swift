/// Which notification types a Mastodon Web Push subscription asks the server to push (`data[alerts][…]`).
///
/// The categories map onto Mastodon's alert keys: `reply` has no key of its own (Mastodon pushes a reply
/// as a `mention`), and `moderation_warning` and `severed_relationships` have none at all — those arrive only
/// through the notifications poll. docs/backends/push.md has the table.
public struct MastodonPushAlerts: Sendable, Hashable {
    /// Every alert key Mastodon 4.5 knows, in the order the form sends them.
    public static let knownKeys = [
        "mention", "status", "reblog", "follow", "follow_request", "favourite", "poll", "update", "admin.sign_up",
        "admin.report", "quote", "quoted_update",
    ]

    /// The alert keys switched on; the form sends every known key, `false` for the others.
    public private(set) var enabled: Set<String>

    /// Alerts for `enabled` keys; unknown keys are ignored (a server that gains one is asked for it only once
    /// the library knows it).
    public init(enabled: Set<String>) { self.enabled = enabled.intersection(Self.knownKeys) }

    /// Alerts for the app's notification categories (the list): `reply` turns on `mention`;
    /// `moderation_warning` and `severed_relationships` have no alert key and change nothing.
    public init(categories: Set<String>) {
        var keys = categories
        if keys.contains("reply") { keys.insert("mention") }
        self.init(enabled: keys)
    }

    /// Every personal alert on (not the admin ones): what an account subscribes with by default.
    public static let personal = MastodonPushAlerts(enabled: [
        "mention", "status", "reblog", "follow", "follow_request", "favourite", "poll", "update", "quote",
        "quoted_update",
    ])

    /// The `data[alerts][key]=true|false` fields, one per known key.
    var formFields: [(String, String)] {
        Self.knownKeys.map { ("data[alerts][\($0)]", enabled.contains($0) ? "true" : "false") }
    }

    /// A stable text form (sorted keys) for the store.
    var storedText: String { enabled.sorted().joined(separator: ",") }

    init(storedText: String) { self.init(enabled: Set(storedText.split(separator: ",").map(String.init))) }
}

/// From whom a Mastodon Web Push subscription accepts pushes (`data[policy]`).
public enum MastodonPushPolicy: String, Sendable, CaseIterable {
    /// Everyone.
    case all
    /// Accounts the user follows.
    case followed
    /// Accounts that follow the user.
    case follower
    /// No one (the subscription stays, silent).
    case none
}
