/// How many pages a poll may read when a polling tick makes it.
///
/// Seed 002 allows a tick at most 3 requests per account (the unread count, the timeline, notifications). The
/// engine's polls page upward until they reach the top (``MastodonAccountEngine/timelinePagesPerPoll``,
/// ``MastodonAccountEngine/notificationPagesPerPoll``); inside a tick the scheduler binds a smaller bound here,
/// and what is left is the engine's backlog, read at the next tick (which then comes at a reader's pace). A
/// task-local and not a parameter: the bound travels through the scheduler's single-flight into the engine
/// without widening ``MastodonPollTarget``, and a poll that joins a tick's gets the same bound.
enum MastodonTickPageBudget {
    /// The bound of the current tick's poll, or nil outside a tick (the engine's own bound applies).
    @TaskLocal static var pages: Int?
}
