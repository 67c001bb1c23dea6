import TidingsCore

/// A `MastodonTimelineError` says why the timeline store refused a request; the store is unchanged when it
/// is thrown.
///
/// `description` names the kind and the timeline key, never payloads.
public struct MastodonTimelineError: TidingsError {
    enum Code: String, Sendable {
        case invalidLimit, gapNotFound, gapUnfillable, missingAnchor, corruptRow
    }

    let code: Code

    /// The kind of failure (compare with the static members, e.g. `error == .gapNotFound`).
    public var kind: TidingsErrorKind { TidingsErrorKind(code) }

    /// What went wrong, without payloads.
    public let detail: String?

    init(_ code: Code, detail: String? = nil) {
        self.code = code
        self.detail = detail
    }

    /// A page limit or server cap below 1.
    public static let invalidLimit = MastodonTimelineError(.invalidLimit)
    /// No gap entry is at the requested position (it was closed, trimmed or never existed).
    public static let gapNotFound = MastodonTimelineError(.gapNotFound)
    /// The gap is marked unfillable: the server can no longer page into it.
    public static let gapUnfillable = MastodonTimelineError(.gapUnfillable)
    /// The gap has no cached status on the side it was asked to be loaded from.
    public static let missingAnchor = MastodonTimelineError(.missingAnchor)
    /// A stored row has a shape this version cannot read (the cache is disposable: rebuild it).
    public static let corruptRow = MastodonTimelineError(.corruptRow)

    /// The kind and detail, e.g. `MastodonTimelineError.gapNotFound: home@1 position 7`.
    public var description: String {
        var text = "MastodonTimelineError.\(code.rawValue)"
        if let detail { text += ": \(detail)" }
        return text
    }
}
