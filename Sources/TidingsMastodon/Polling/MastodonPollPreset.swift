import TidingsCore

/// How recently the person touched the app (seed 002 §3's rows).
public enum MastodonInteraction: Sendable, Hashable {
    /// The last interaction was at most 2 minutes ago.
    case interacting
    /// Idle for more than 2 minutes.
    case idle
    /// Idle for more than 10 minutes.
    case longIdle

    /// The level after `idleFor` without an interaction.
    public init(idleFor: Duration) {
        if idleFor > .seconds(600) {
            self = .longIdle
        } else if idleFor > .seconds(120) {
            self = .idle
        } else {
            self = .interacting
        }
    }
}

/// The foreground poll intervals of one preset: the active account's and every other account's, per
/// ``MastodonInteraction``.
public struct MastodonPollIntervals: Sendable, Hashable {
    /// The active account's intervals: interacting, idle > 2 min, idle > 10 min.
    public var active: [Duration]
    /// Every other account's intervals, in the same order.
    public var others: [Duration]

    /// Intervals from whole seconds (three each: interacting, idle, long idle).
    public init(activeSeconds: [Int64], otherSeconds: [Int64]) {
        active = activeSeconds.map { .seconds($0) }
        others = otherSeconds.map { .seconds($0) }
    }

    /// The interval for an account in a state.
    public func interval(activeAccount: Bool, interaction: MastodonInteraction) -> Duration {
        let row = activeAccount ? active : others
        let index: Int
        switch interaction {
        case .interacting: index = 0
        case .idle: index = 1
        case .longIdle: index = 2
        }
        return row.indices.contains(index) ? row[index] : row.last ?? .seconds(600)
    }
}

/// The user's polling setting (seed 002 §3: "Frequent / Normal / Battery Saver / Manual").
///
/// | preset | active account | other accounts | background refresh |
/// |---|---|---|---|
/// | Frequent | 15 / 30 / 60 s | 90 / 150 / 300 s | every 15 min |
/// | Normal (the document's table) | 30 / 60 / 120 s | 180 / 300 / 600 s | every 15 min |
/// | Battery Saver | 120 / 300 / 600 s | 600 / 900 / 1800 s | every 30 min |
/// | Manual | none | none | every 30 min |
///
/// (interacting / idle > 2 min / idle > 10 min). Low Power doubles every interval. Manual polls on no
/// timer, but still polls when a push wakes the app, in the background refresh, and once when a
/// timeline appears.
public enum MastodonPollPreset: String, Sendable, Hashable, CaseIterable {
    /// Half Normal's intervals: at most 3 requests per 15 s, 60 per 5 minutes, a fifth of Mastodon's limit.
    case frequent
    /// The document's table.
    case normal
    /// Four times Normal for the active account, and more for the others.
    case batterySaver
    /// No timer.
    case manual

    /// The foreground intervals, or `nil` for Manual (no timer).
    public var intervals: MastodonPollIntervals? {
        switch self {
        case .frequent: MastodonPollIntervals(activeSeconds: [15, 30, 60], otherSeconds: [90, 150, 300])
        case .normal: MastodonPollIntervals(activeSeconds: [30, 60, 120], otherSeconds: [180, 300, 600])
        case .batterySaver:
            MastodonPollIntervals(activeSeconds: [120, 300, 600], otherSeconds: [600, 900, 1800])
        case .manual: nil
        }
    }

    /// How often the app should ask the system for a background refresh (never under 15 minutes).
    public var backgroundRefreshInterval: Duration {
        switch self {
        case .frequent, .normal: .seconds(15 * 60)
        case .batterySaver, .manual: .seconds(30 * 60)
        }
    }
}
