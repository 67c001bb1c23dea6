import Foundation
import TidingsCore

/// The limits an instance announces in `configuration`, common to v1 and v2.
public struct MastodonInstanceLimits: Codable, Hashable, Sendable {
    /// The longest status text (`configuration.statuses.max_characters`).
    public var maxCharacters: Int?
    /// The most media per status (`configuration.statuses.max_media_attachments`).
    public var maxMediaAttachments: Int?
    /// The largest image upload in bytes (`configuration.media_attachments.image_size_limit`).
    public var imageSizeLimit: Int?
    /// The largest video upload in bytes.
    public var videoSizeLimit: Int?
    /// The MIME types uploads may have.
    public var supportedMimeTypes: [String]

    /// Limits as an instance announced them.
    public init(
        maxCharacters: Int? = nil, maxMediaAttachments: Int? = nil, imageSizeLimit: Int? = nil,
        videoSizeLimit: Int? = nil, supportedMimeTypes: [String] = []
    ) {
        self.maxCharacters = maxCharacters
        self.maxMediaAttachments = maxMediaAttachments
        self.imageSizeLimit = imageSizeLimit
        self.videoSizeLimit = videoSizeLimit
        self.supportedMimeTypes = supportedMimeTypes
    }

    private struct Statuses: Decodable {
        var maxCharacters: Int?
        var maxMediaAttachments: Int?
        enum CodingKeys: String, CodingKey {
            case maxCharacters = "max_characters"
            case maxMediaAttachments = "max_media_attachments"
        }
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            maxCharacters = container.lenient(Int.self, .maxCharacters)
            maxMediaAttachments = container.lenient(Int.self, .maxMediaAttachments)
        }
    }

    private struct Media: Decodable {
        var imageSizeLimit: Int?
        var videoSizeLimit: Int?
        var supportedMimeTypes: [String]
        enum CodingKeys: String, CodingKey {
            case imageSizeLimit = "image_size_limit"
            case videoSizeLimit = "video_size_limit"
            case supportedMimeTypes = "supported_mime_types"
        }
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            imageSizeLimit = container.lenient(Int.self, .imageSizeLimit)
            videoSizeLimit = container.lenient(Int.self, .videoSizeLimit)
            supportedMimeTypes = container.lossyArray(String.self, .supportedMimeTypes)
        }
    }

    enum ConfigurationKeys: String, CodingKey {
        case statuses
        case mediaAttachments = "media_attachments"
    }

    /// Reads `statuses` and `media_attachments` of a `configuration` object; anything missing is nil.
    init(configuration container: KeyedDecodingContainer<ConfigurationKeys>) {
        let statuses = container.lenient(Statuses.self, .statuses)
        let media = container.lenient(Media.self, .mediaAttachments)
        self.init(
            maxCharacters: statuses?.maxCharacters, maxMediaAttachments: statuses?.maxMediaAttachments,
            imageSizeLimit: media?.imageSizeLimit, videoSizeLimit: media?.videoSizeLimit,
            supportedMimeTypes: media?.supportedMimeTypes ?? [])
    }
}

/// `GET /api/v1/instance` (`V1Instance`), which every Mastodon-API server offers, Nextcloud Social included.
public struct MastodonInstanceV1: Codable, Hashable, Sendable {
    /// The instance's domain.
    public var uri: String
    /// Its name.
    public var title: String
    /// The version string (`3.5.3`, or a compatibility string such as `3.5.3 (compatible; Pleroma 2.5)`).
    public var version: String
    /// `urls.streaming_api`: nil when missing or empty (Nextcloud Social sends `urls: {}`).
    public var streamingAPI: URL?
    /// Whether `urls` was present but empty: Nextcloud Social's "no streaming" signal.
    public var urlsEmpty: Bool
    /// `vapid_key`: nil when absent, `""` when the server says it has no Web Push (Nextcloud Social).
    public var vapidKey: String?
    /// `configuration`'s limits.
    public var limits: MastodonInstanceLimits

    private enum CodingKeys: String, CodingKey {
        case uri, title, version, urls, configuration
        case vapidKey = "vapid_key"
        case streamingAPI = "streaming_api"
        case urlsEmpty = "urls_empty"
        case limits
    }

    private enum URLKeys: String, CodingKey { case streamingAPI = "streaming_api" }

    /// Decodes leniently: every field may be missing.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let limits = try? container.decodeIfPresent(MastodonInstanceLimits.self, forKey: .limits) {
            // Our own encoding (a round trip through a cache), not a server's.
            self.limits = limits
            streamingAPI = container.url(.streamingAPI)
            urlsEmpty = container.lenient(Bool.self, .urlsEmpty) ?? false
        } else {
            let urls = try? container.nestedContainer(keyedBy: URLKeys.self, forKey: .urls)
            streamingAPI = urls?.url(.streamingAPI)
            urlsEmpty = urls.map { $0.allKeys.isEmpty } ?? false
            let configuration = try? container.nestedContainer(
                keyedBy: MastodonInstanceLimits.ConfigurationKeys.self, forKey: .configuration)
            limits = configuration.map(MastodonInstanceLimits.init(configuration:)) ?? MastodonInstanceLimits()
        }
        uri = container.lenient(String.self, .uri) ?? ""
        title = container.lenient(String.self, .title) ?? ""
        version = container.lenient(String.self, .version) ?? ""
        vapidKey = container.lenient(String.self, .vapidKey)
    }

    /// Encodes a flat form of the fields above (for a cache), which this decoder reads back.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(uri, forKey: .uri)
        try container.encode(title, forKey: .title)
        try container.encode(version, forKey: .version)
        try container.encodeIfPresent(streamingAPI?.absoluteString, forKey: .streamingAPI)
        try container.encode(urlsEmpty, forKey: .urlsEmpty)
        try container.encodeIfPresent(vapidKey, forKey: .vapidKey)
        try container.encode(limits, forKey: .limits)
    }
}

/// `GET /api/v2/instance` (`Instance`, Mastodon 4.0+).
public struct MastodonInstanceV2: Codable, Hashable, Sendable {
    /// The instance's domain.
    public var domain: String
    /// Its name.
    public var title: String
    /// The version string.
    public var version: String
    /// `configuration.urls.streaming`: nil when missing or empty.
    public var streamingURL: URL?
    /// Whether `configuration.urls` was present but empty.
    public var urlsEmpty: Bool
    /// `configuration.vapid.public_key`: nil when absent, `""` when the server has no Web Push.
    public var vapidPublicKey: String?
    /// `configuration`'s limits.
    public var limits: MastodonInstanceLimits

    private enum CodingKeys: String, CodingKey {
        case domain, title, version, configuration
        case streamingURL = "streaming_url"
        case urlsEmpty = "urls_empty"
        case vapidPublicKey = "vapid_public_key"
        case limits
    }

    private enum ConfigurationKeys: String, CodingKey { case urls, vapid }
    private enum URLKeys: String, CodingKey { case streaming }
    private enum VapidKeys: String, CodingKey { case publicKey = "public_key" }

    /// Decodes leniently: every field may be missing.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        domain = container.lenient(String.self, .domain) ?? ""
        title = container.lenient(String.self, .title) ?? ""
        version = container.lenient(String.self, .version) ?? ""
        if let limits = try? container.decodeIfPresent(MastodonInstanceLimits.self, forKey: .limits) {
            self.limits = limits
            streamingURL = container.url(.streamingURL)
            urlsEmpty = container.lenient(Bool.self, .urlsEmpty) ?? false
            vapidPublicKey = container.lenient(String.self, .vapidPublicKey)
            return
        }
        let configuration = try? container.nestedContainer(keyedBy: ConfigurationKeys.self, forKey: .configuration)
        let urls = try? configuration?.nestedContainer(keyedBy: URLKeys.self, forKey: .urls)
        streamingURL = urls?.url(.streaming)
        urlsEmpty = urls.map { $0.allKeys.isEmpty } ?? false
        let vapid = try? configuration?.nestedContainer(keyedBy: VapidKeys.self, forKey: .vapid)
        vapidPublicKey = vapid?.lenient(String.self, .publicKey)
        let limitsContainer = try? container.nestedContainer(
            keyedBy: MastodonInstanceLimits.ConfigurationKeys.self, forKey: .configuration)
        limits = limitsContainer.map(MastodonInstanceLimits.init(configuration:)) ?? MastodonInstanceLimits()
    }

    /// Encodes a flat form of the fields above (for a cache), which this decoder reads back.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(domain, forKey: .domain)
        try container.encode(title, forKey: .title)
        try container.encode(version, forKey: .version)
        try container.encodeIfPresent(streamingURL?.absoluteString, forKey: .streamingURL)
        try container.encode(urlsEmpty, forKey: .urlsEmpty)
        try container.encodeIfPresent(vapidPublicKey, forKey: .vapidPublicKey)
        try container.encode(limits, forKey: .limits)
    }
}
