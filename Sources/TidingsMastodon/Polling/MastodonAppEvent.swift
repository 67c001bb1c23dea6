/// One change of the app's state, as the app tells it to ``MastodonPollScheduler/appStateChanged(_:)``:
/// the one way the app informs polling.
public enum MastodonAppEvent: Sendable, Hashable {
    /// The app entered the foreground (`true`) or the background. Entering the foreground counts as
    /// an interaction.
    case foreground(Bool)
    /// The account on screen changed (`nil`: none).
    case activeAccount(String?)
    /// The timeline visible for the active account (`home`, `public`, `tag:swift`…; `nil`: none, e.g. a
    /// settings screen). Only refreshes *ticks*; ``MastodonPollScheduler/timelineAppeared(_:account:)``
    /// refreshes once when a timeline appears.
    case visibleTimeline(String?)
    /// The person touched the app now (a scroll, a tap, typing).
    case interaction
    /// Low Power Mode turned on or off.
    case lowPower(Bool)
    /// The network path changed.
    case networkPath(MastodonNetworkPath)
    /// The user's polling settings changed.
    case settings(MastodonPollSettings)
}
