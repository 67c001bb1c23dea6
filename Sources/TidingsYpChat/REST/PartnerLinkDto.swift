/// One partner link of `GET api/partners`: its name under the JSON key `"Page Name"` (with the
/// space, as the server sends it) and its address.
///
/// Decoding is lenient: the address is read from `URL`, `url`, `Link` or `link`; a missing one
/// decodes as empty (the app shows the name without a link) rather than failing the list.
public struct PartnerLinkDto: Codable, Sendable, Equatable {
    /// The partner's page name (JSON `"Page Name"`).
    public var pageName: String
    /// The partner's address, as the server sent it.
    public var url: String

    /// A partner link.
    public init(pageName: String, url: String) {
        self.pageName = pageName
        self.url = url
    }

    /// Decodes leniently (see the type's description).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        pageName = container.text("Page Name") ?? ""
        url = container.text("URL", "url", "Link", "link") ?? ""
    }

    /// Encodes as `{"Page Name", "URL"}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyCodingKey.self)
        try container.encode(pageName, forKey: AnyCodingKey("Page Name"))
        try container.encode(url, forKey: AnyCodingKey("URL"))
    }
}
