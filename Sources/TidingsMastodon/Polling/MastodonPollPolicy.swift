import TidingsCore

/// What one account's polling does at a moment: how often, and what each tick asks.
public struct MastodonPollPlan: Sendable, Hashable {
    /// When ticks come on their own.
    public var schedule: PollSchedule
    /// The timeline a tick refreshes (after the unread count), or `nil` for none.
    public var timeline: String?
    /// Whether ticks poll notifications only (Wi-Fi only on a metered path): no timeline.
    public var notificationsOnly: Bool

    /// A plan.
    public init(schedule: PollSchedule, timeline: String?, notificationsOnly: Bool) {
        self.schedule = schedule
        self.timeline = timeline
        self.notificationsOnly = notificationsOnly
    }
}

/// The inputs of ``MastodonPollPolicy/plan(_:)`` for one account.
public struct MastodonPollInputs: Sendable, Hashable {
    /// The account's tiers (``MastodonTierPolicy``).
    public var tiers: MastodonTiers
    /// Whether this is the active account (the one on screen).
    public var activeAccount: Bool
    /// How recently the person interacted.
    public var interaction: MastodonInteraction
    /// Whether Low Power Mode is on.
    public var lowPower: Bool
    /// The network path.
    public var path: MastodonNetworkPath
    /// The settings.
    public var settings: MastodonPollSettings
    /// The timeline visible for this account now, if any.
    public var visibleTimeline: String?
    /// Whether Home was visible for this account within the last 5 minutes.
    public var homeVisibleRecently: Bool

    /// Inputs.
    public init(
        tiers: MastodonTiers, activeAccount: Bool, interaction: MastodonInteraction, lowPower: Bool,
        path: MastodonNetworkPath, settings: MastodonPollSettings, visibleTimeline: String?,
        homeVisibleRecently: Bool
    ) {
        self.tiers = tiers
        self.activeAccount = activeAccount
        self.interaction = interaction
        self.lowPower = lowPower
        self.path = path
        self.settings = settings
        self.visibleTimeline = visibleTimeline
        self.homeVisibleRecently = homeVisibleRecently
    }
}

/// `MastodonPollPolicy` turns an account's state into its ``MastodonPollPlan``: a pure function,
/// asked again on every wake of the account's `PollLoop`.
///
/// The rules (seed 002 §3, §6):
/// - Foreground, polling adaptive: the preset's interval for the account (active or other) and its
///   interaction; Low Power doubles it. Manual has no timer.
/// - Beside an open stream: the tier's safety net (5 minutes, 10 when pushed), doubled in Low Power;
///   Manual still has no timer.
/// - Background, offline or needing reauthentication: no timer (the background refresh, a push wake
///   and a timeline that appears still poll; the loop itself stops offline and on reauthentication).
/// - The timeline a tick refreshes: the visible one; with none visible, Home if it was visible within
///   the last 5 minutes; never in the background; never with "Wi-Fi only" on a metered path, which
///   leaves the unread count and notifications.
public enum MastodonPollPolicy {
    /// The plan for these inputs.
    public static func plan(_ inputs: MastodonPollInputs) -> MastodonPollPlan {
        let notificationsOnly = inputs.settings.wifiOnly && inputs.path.isMetered
        let factor: Int64 = inputs.lowPower ? 2 : 1
        var schedule = PollSchedule.onRequest
        var foreground = false
        switch inputs.tiers.polling {
        case .adaptive:
            foreground = true
            if let intervals = inputs.settings.preset.intervals {
                let base = intervals.interval(activeAccount: inputs.activeAccount, interaction: inputs.interaction)
                schedule = .every(base * factor)
            }
        case .safetyNet(let minutes):
            foreground = true
            if inputs.settings.preset != .manual {
                schedule = .every(.seconds(Int64(max(1, minutes)) * 60 * factor))
            }
        case .backgroundRefresh, .stopped:
            break
        }
        var timeline: String?
        if foreground && !notificationsOnly {
            timeline = inputs.visibleTimeline ?? (inputs.homeVisibleRecently ? MastodonTimelineKey.homeTimeline : nil)
        }
        return MastodonPollPlan(schedule: schedule, timeline: timeline, notificationsOnly: notificationsOnly)
    }
}
