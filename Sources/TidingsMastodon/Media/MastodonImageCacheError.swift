import TidingsCore

/// Why the image cache refused: the cache on disk is left as it was when one is thrown.
///
/// `description` names the kind and at most a file name, never a URL's query (it may carry a token).
public struct MastodonImageCacheError: TidingsError {
    enum Code: String, Sendable {
        case corruptIndex, tooLarge, notAnImageURL, download, disk
    }

    let code: Code

    /// The kind of failure (compare with the static members, e.g. `error == .corruptIndex`).
    public var kind: TidingsErrorKind { TidingsErrorKind(code) }

    /// What went wrong, without URLs.
    public let detail: String?

    init(_ code: Code, detail: String? = nil) {
        self.code = code
        self.detail = detail
    }

    /// The index on disk cannot be read (not JSON, a wrong version, an entry outside the cache directory):
    /// delete the directory, the cache is disposable.
    public static let corruptIndex = MastodonImageCacheError(.corruptIndex)
    /// The image is larger than the cache's per-file limit (or its whole capacity).
    public static let tooLarge = MastodonImageCacheError(.tooLarge)
    /// The URL is not an http(s) URL.
    public static let notAnImageURL = MastodonImageCacheError(.notAnImageURL)
    /// The server answered with a status other than 2xx.
    public static let download = MastodonImageCacheError(.download)
    /// A file could not be written, moved or removed.
    public static let disk = MastodonImageCacheError(.disk)

    /// The kind and detail, e.g. `MastodonImageCacheError.tooLarge: 600000 bytes over 500000`.
    public var description: String {
        var text = "MastodonImageCacheError.\(code.rawValue)"
        if let detail { text += ": \(detail)" }
        return text
    }
}
