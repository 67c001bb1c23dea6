import TidingsCore

/// One of the reader's content filters, in one shape for both APIs: Mastodon 4's `/api/v2/filters` (a title,
/// keywords, an action) and the older `/api/v1/filters` (one phrase each).
///
/// Decoding is lenient like the other wire types: missing lists are empty, unknown contexts and actions are
/// kept as strings, so a newer server's values survive.
public struct MastodonFilter: Sendable, Hashable, Decodable {
    /// One keyword of a filter.
    public struct Keyword: Sendable, Hashable, Decodable {
        /// The text matched.
        public var keyword: String
        /// Whether only whole words match.
        public var wholeWord: Bool

        /// A keyword.
        public init(keyword: String, wholeWord: Bool) {
            self.keyword = keyword
            self.wholeWord = wholeWord
        }

        enum CodingKeys: String, CodingKey {
            case keyword
            case wholeWord = "whole_word"
        }

        /// Decodes a v2 `FilterKeyword`; `whole_word` defaults to false when missing.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            keyword = try container.decode(String.self, forKey: .keyword)
            wholeWord = (try? container.decodeIfPresent(Bool.self, forKey: .wholeWord)) ?? false
        }
    }

    /// The server's ID of the filter.
    public var id: ServerID
    /// Its title (a v1 filter's phrase).
    public var title: String
    /// Where it applies: `home`, `notifications`, `public`, `thread`, `account` (and values of newer servers).
    public var context: [String]
    /// What the server does with a match: `warn`, `hide`, `blur` (v2); a v1 filter reads `hide` when it is
    /// irreversible (the server drops matches) and `warn` otherwise.
    public var action: String
    /// Its keywords (a v1 filter has its phrase as the one keyword).
    public var keywords: [Keyword]

    /// A filter.
    public init(id: ServerID, title: String, context: [String], action: String, keywords: [Keyword]) {
        self.id = id
        self.title = title
        self.context = context
        self.action = action
        self.keywords = keywords
    }

    enum CodingKeys: String, CodingKey {
        case id, title, context, keywords, phrase, irreversible
        case filterAction = "filter_action"
        case wholeWord = "whole_word"
    }

    /// Decodes a v2 `Filter` or a v1 `V1_Filter` (told apart by `phrase`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(ServerID.self, forKey: .id)
        context = (try? container.decodeIfPresent([String].self, forKey: .context)) ?? []
        if let phrase = try? container.decodeIfPresent(String.self, forKey: .phrase) {
            title = phrase
            let wholeWord = (try? container.decodeIfPresent(Bool.self, forKey: .wholeWord)) ?? false
            keywords = [Keyword(keyword: phrase, wholeWord: wholeWord)]
            let irreversible = (try? container.decodeIfPresent(Bool.self, forKey: .irreversible)) ?? false
            action = irreversible ? "hide" : "warn"
        } else {
            title = (try? container.decodeIfPresent(String.self, forKey: .title)) ?? ""
            keywords = (try? container.decodeIfPresent([Keyword].self, forKey: .keywords)) ?? []
            action = (try? container.decodeIfPresent(String.self, forKey: .filterAction)) ?? "warn"
        }
    }
}
