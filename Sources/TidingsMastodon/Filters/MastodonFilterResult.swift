import TidingsCore

/// One of the reader's v2 filters that matched a status (Mastodon 4's `FilterResult`, the status's `filtered`
/// list): which filter, and which of its keywords or status entries matched.
///
/// The server sends it for every matching filter of the request's context, `warn` and `hide` alike; it is the
/// client's to act on it (Mastodon's own clients show a warning for `warn` and drop `hide` matches, which the
/// engine does: ``MastodonStatus/hiddenByFilter``). Decoding is lenient: only the filter's ID is required,
/// unknown actions are kept as strings.
public struct MastodonFilterResult: Codable, Hashable, Sendable {
    /// The matched filter as a `FilterResult` carries it (without its keywords and statuses).
    public struct Filter: Codable, Hashable, Sendable {
        /// The filter's server ID.
        public var id: ServerID
        /// The title the reader gave it: what a warning shows.
        public var title: String
        /// Where it applies (`home`, `notifications`, `public`, `thread`, `account`, …).
        public var context: [String]
        /// `warn`, `hide`, `blur` (Mastodon 4.4), or a newer server's value; `warn` when missing.
        public var action: String

        /// A matched filter.
        public init(id: ServerID, title: String, context: [String] = [], action: String) {
            self.id = id
            self.title = title
            self.context = context
            self.action = action
        }

        enum CodingKeys: String, CodingKey {
            case id, title, context
            case action = "filter_action"
        }

        /// Decodes leniently: only a missing or unreadable `id` fails it.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(ServerID.self, forKey: .id)
            title = container.lenient(String.self, .title) ?? ""
            context = container.lossyArray(String.self, .context)
            action = container.lenient(String.self, .action) ?? "warn"
        }
    }

    /// The filter that matched.
    public var filter: Filter
    /// The keywords of the filter that matched the status.
    public var keywordMatches: [String]
    /// The status IDs of the filter that matched (a filter may name statuses).
    public var statusMatches: [ServerID]

    /// A result.
    public init(filter: Filter, keywordMatches: [String] = [], statusMatches: [ServerID] = []) {
        self.filter = filter
        self.keywordMatches = keywordMatches
        self.statusMatches = statusMatches
    }

    /// Whether the filter's action is `hide`: clients drop the status.
    public var hides: Bool { filter.action == "hide" }

    /// Whether the filter's action is `warn`: clients show the status behind a warning naming the filter.
    public var warns: Bool { filter.action == "warn" }

    enum CodingKeys: String, CodingKey {
        case filter
        case keywordMatches = "keyword_matches"
        case statusMatches = "status_matches"
    }

    /// Decodes leniently: a missing or unreadable `filter` fails it (the status keeps its other results);
    /// null or malformed match lists are empty.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        filter = try container.decode(Filter.self, forKey: .filter)
        keywordMatches = container.lossyArray(String.self, .keywordMatches)
        statusMatches = container.lossyArray(ServerID.self, .statusMatches)
    }
}

extension MastodonStatus {
    /// Whether a `hide` filter matched this status or, for a boost, the boosted one: Mastodon's clients drop
    /// such statuses from timelines, and so does the engine.
    public var hiddenByFilter: Bool {
        filtered.contains(where: \.hides) || (reblog?.filtered.contains(where: \.hides) ?? false)
    }

    /// The `warn` matches of this status and, for a boost, of the boosted one: an app shows the status behind a
    /// warning naming these filters' titles. Empty when none matched.
    public var filterWarnings: [MastodonFilterResult] {
        filtered.filter(\.warns) + (reblog?.filtered.filter(\.warns) ?? [])
    }
}
