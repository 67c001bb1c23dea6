/// A `MastodonTimelineFailure` says why the latest poll of an account's visible timeline failed while the rest
/// of the tick (unread count, notifications) went on: a timeline the engine cannot fetch (an unknown kind, a
/// list that is gone, a tag the server refuses) fails only itself.
public struct MastodonTimelineFailure: Sendable, Equatable {
    /// The timeline's name (`list:42`, `tag:swift`, …).
    public var timeline: String
    /// What the fetch failed with.
    public var error: MastodonError

    /// A failure of `timeline` with `error`.
    public init(timeline: String, error: MastodonError) {
        self.timeline = timeline
        self.error = error
    }

    /// Whether `error` concerns only the timeline that was asked (the server or the engine cannot serve that
    /// timeline), so the tick goes on; nil for an error that concerns the account or the connection.
    static func timelineOnly(_ error: any Error) -> MastodonError? {
        guard let error = error as? MastodonError else { return nil }
        switch error {
        case .unsupported, .notFound, .badRequest, .decoding: return error
        case .server where (400..<500).contains(error.status ?? 500): return error
        default: return nil
        }
    }
}
