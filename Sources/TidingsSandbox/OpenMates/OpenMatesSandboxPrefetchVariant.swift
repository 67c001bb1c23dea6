/// Switches for what a real server's offline-prefetch endpoint may do; failures (a 500, a garbage body, a hang)
/// come from the kit's fault switches on the endpoint's ``OpenMatesSandboxPrefetchEndpoint/faults``.
public struct OpenMatesSandboxPrefetchVariant: Sendable, Hashable {
    /// Pages shorter than asked (one chat fewer, at least one): the client must follow `next_cursor`, not its
    /// own arithmetic.
    public var shortPages = false
    /// `done` only on an extra empty page after the last chats (the last full page says `done: false`);
    /// otherwise the page that reaches the end says `done: true`.
    public var doneOnExtraEmptyPage = false
    /// The first page (cursor 10) also repeats the chats phase 1b sent, in full, as a server whose offsets
    /// count sub-chats does.
    public var repeatPhase1bChats = false

    /// The plain endpoint.
    public init() {}
}
