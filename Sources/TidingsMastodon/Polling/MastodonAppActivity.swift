/// The device's network path, as the platform reports it (`NWPath` on Apple platforms).
public struct MastodonNetworkPath: Sendable, Hashable {
    /// Whether the path can reach the network at all.
    public var satisfied: Bool
    /// Whether it is expensive (cellular, a personal hotspot).
    public var expensive: Bool
    /// Whether it is constrained (Low Data Mode, or any other metered path).
    public var constrained: Bool

    /// A path.
    public init(satisfied: Bool, expensive: Bool = false, constrained: Bool = false) {
        self.satisfied = satisfied
        self.expensive = expensive
        self.constrained = constrained
    }

    /// Unmetered and satisfied (Wi-Fi, Ethernet).
    public static let wifi = MastodonNetworkPath(satisfied: true)
    /// Satisfied and expensive.
    public static let cellular = MastodonNetworkPath(satisfied: true, expensive: true)
    /// Unsatisfied.
    public static let offline = MastodonNetworkPath(satisfied: false)

    /// Whether "Wi-Fi only" applies: cellular or any metered path.
    public var isMetered: Bool { expensive || constrained }
}

/// The user's polling settings.
public struct MastodonPollSettings: Sendable, Hashable {
    /// The preset.
    public var preset: MastodonPollPreset
    /// "Wi-Fi only sync": on a metered path, ticks poll notifications only.
    public var wifiOnly: Bool
    /// The background refresh interval; `nil` for the preset's. Never used below 15 minutes.
    public var backgroundRefreshInterval: Duration?

    /// Settings (Normal, no Wi-Fi restriction, the preset's background interval by default).
    public init(
        preset: MastodonPollPreset = .normal, wifiOnly: Bool = false, backgroundRefreshInterval: Duration? = nil
    ) {
        self.preset = preset
        self.wifiOnly = wifiOnly
        self.backgroundRefreshInterval = backgroundRefreshInterval
    }
}
