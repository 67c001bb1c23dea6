/// How a ``MastodonSandboxServer`` differs from stock Mastodon: the family of real Mastodon-API servers
/// (Mastodon 4.x, GoToSocial, Pleroma/Akkoma, Nextcloud Social) as switches, so a client is proven
/// against each rather than against a server shaped like itself.
public struct MastodonSandboxVariant: Sendable, Hashable {
    /// How the server spells IDs.
    public enum IDStyle: Sendable, Hashable {
        /// Decimal snowflakes that start `digits` long and grow a digit after 50 IDs, as
        /// Mastodon's do over time (so string order and length order disagree).
        case snowflake(digits: Int)
        /// GoToSocial's 26-character ULIDs (Crockford base32).
        case ulid
        /// Pleroma/Akkoma's 18-character flake IDs (base62).
        case flake
    }

    /// How the server answers `GET /api/v1/statuses` (several statuses by ID in one request).
    public enum StatusesLookup: Sendable, Hashable {
        /// Mastodon 4.3+: `id[]=…` (at most 20), the statuses found, a deleted or unknown ID left out.
        case mastodon
        /// Pleroma/Akkoma: `ids[]=…` only; without it a 400 ("Missing field: ids"), so Mastodon's `id[]` fails.
        case pleromaIDs
        /// No such route (GoToSocial, Nextcloud Social): 404.
        case missing
    }

    /// The ID alphabet and length.
    public var idStyle: IDStyle = .snowflake(digits: 18)
    /// How `GET /api/v1/statuses?id[]=` is answered.
    public var statusesLookup: StatusesLookup = .mastodon
    /// Whether pages drop some of their items after paging (server-side filters), so a page may be
    /// shorter than `limit` while more remain: only `Link` tells where the end is.
    public var filtersPages = false
    /// A keyword filter with Mastodon's "hide" action: statuses whose content contains it are dropped after
    /// paging, so a page can come back empty while newer statuses remain (only `Link` moves on).
    public var hiddenKeyword: String?
    /// Whether optional fields are sent as null or left out (counters, the reader's flags, media, avatar "").
    public var sparseFields = false
    /// Whether only v1 endpoints exist (`/api/v2/...` answers 404).
    public var version1Only = false
    /// Nextcloud Social: `urls: {}`, `vapid_key: ""`, pages capped at 50, `limit=0` is a 400, no ETag,
    /// v1 only, no unread count (`/api/v1/notifications/unread_count` is a 404, as on a real one).
    public var nextcloudSocial = false
    /// How many entries the home feed keeps (Mastodon keeps about 400); older ones cannot be paged to.
    public var feedCap = 400
    /// The requests each account may make per 5-minute window before 429s (Mastodon: 300).
    public var requestsPerWindow = 300
    /// Whether statuses and notifications carry enum values newer than any client knows (a newer server):
    /// visibility ``newerVisibility``, a media attachment of type ``newerMediaType``, every notification of
    /// type ``newerNotificationType``.
    public var newerEnumValues = false

    /// The visibility a server newer than the client sends with ``newerEnumValues``.
    public static let newerVisibility = "circle"
    /// The media type a server newer than the client sends with ``newerEnumValues``.
    public static let newerMediaType = "model3d"
    /// The notification type a server newer than the client sends with ``newerEnumValues``.
    public static let newerNotificationType = "annual_report_ready"

    /// Stock Mastodon 4.3.
    public init() {}

    /// Mastodon 4.3 with 18-digit snowflakes.
    public static let mastodon = MastodonSandboxVariant()

    /// GoToSocial-style: ULIDs, v2 instance present, no `GET /api/v1/statuses?id[]=`.
    public static var goToSocial: MastodonSandboxVariant {
        var variant = MastodonSandboxVariant()
        variant.idStyle = .ulid
        // GoToSocial has no multi-status lookup, whatever Mastodon version its instance names (an admin may
        // inject a 4.x one for clients that check it, as this variant's does).
        variant.statusesLookup = .missing
        return variant
    }

    /// Pleroma/Akkoma-style: flake IDs, v1 only, sparse fields, `GET /api/v1/statuses?ids[]=` (not `id[]`).
    public static var pleroma: MastodonSandboxVariant {
        var variant = MastodonSandboxVariant()
        variant.idStyle = .flake
        variant.version1Only = true
        variant.sparseFields = true
        variant.statusesLookup = .pleromaIDs
        return variant
    }

    /// Nextcloud Social (no `GET /api/v1/statuses?id[]=`).
    public static var nextcloud: MastodonSandboxVariant {
        var variant = MastodonSandboxVariant()
        variant.nextcloudSocial = true
        variant.version1Only = true
        variant.statusesLookup = .missing
        return variant
    }

    /// The largest page the server returns.
    var pageCap: Int { nextcloudSocial ? 50 : 40 }
    /// Whether the v2 endpoints exist.
    var hasVersion2: Bool { !version1Only && !nextcloudSocial }
}

/// Spells the server's n-th ID in a variant's style; every style sorts by `ServerID` order
/// (length, then bytes) exactly as by n.
enum MastodonSandboxIDs {
    static func id(_ n: Int, style: MastodonSandboxVariant.IDStyle) -> String {
        switch style {
        case .snowflake(let digits):
            // Starts at 10^(digits-1) - 50, so a digit is added after 50 IDs.
            let width = max(2, min(digits, 18))
            var base = 1
            for _ in 1..<width { base *= 10 }
            return String(base - 50 + n)
        case .ulid:
            return "01" + encode(n, alphabet: Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ"), width: 24)
        case .flake:
            return "A"
                + encode(
                    n, alphabet: Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"), width: 17)
        }
    }

    private static func encode(_ value: Int, alphabet: [Character], width: Int) -> String {
        var digits: [Character] = []
        var rest = value
        repeat {
            digits.append(alphabet[rest % alphabet.count])
            rest /= alphabet.count
        } while rest > 0
        return String(repeating: alphabet[0], count: max(0, width - digits.count)) + String(digits.reversed())
    }
}
