/// The answer of `POST api/upload-image`: where the stored image can be fetched.
///
/// Decoding is lenient: the address is read from `url`, `imageUrl` or `path`; it may be relative
/// (``YpChatConfiguration/absoluteURL(_:)`` puts the base URL in front).
public struct UploadImageResponse: Codable, Sendable, Equatable {
    /// The image's address as the server sent it (possibly relative).
    public var url: String

    /// An upload answer.
    public init(url: String) { self.url = url }

    /// Decodes leniently (see the type's description).
    ///
    /// - Throws: `DecodingError` when no address field is present (the upload is unusable).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        guard let url = container.text("url", "imageUrl", "path"), !url.isEmpty else {
            throw DecodingError.keyNotFound(
                AnyCodingKey("url"), .init(codingPath: decoder.codingPath, debugDescription: "no image URL"))
        }
        self.url = url
    }

    /// Encodes as `{url}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyCodingKey.self)
        try container.encode(url, forKey: AnyCodingKey("url"))
    }
}
