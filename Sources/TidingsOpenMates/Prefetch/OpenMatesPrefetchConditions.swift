/// What the app knows about the device that decides whether prefetching is allowed now; the app updates it
/// (``OpenMatesPrefetcher/update(_:)``) whenever the system reports a change.
///
/// Prefetch runs only while the network is available and neither expensive (cellular, a personal hotspot) nor
/// constrained (Low Data Mode), Low Power Mode is off, and the thermal state is nominal or fair.
public struct OpenMatesPrefetchConditions: Sendable, Hashable {
    /// `ProcessInfo.ThermalState`'s levels, without depending on Foundation's type.
    public enum ThermalState: Int, Sendable, Hashable, Comparable, CaseIterable {
        /// No thermal pressure.
        case nominal
        /// Slightly elevated: prefetch still runs.
        case fair
        /// High: prefetch stops.
        case serious
        /// Critical: prefetch stops.
        case critical

        /// Orders the levels from cool to hot.
        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// Why prefetch may not run now (the first that applies, in this order).
    public enum Block: String, Sendable, Hashable {
        /// No network path.
        case offline
        /// The path is expensive (cellular, hotspot).
        case expensiveNetwork
        /// The path is constrained (Low Data Mode).
        case constrainedNetwork
        /// Low Power Mode is on.
        case lowPowerMode
        /// The thermal state is serious or critical.
        case thermalState
    }

    /// Whether any network path is available.
    public var isOnline: Bool
    /// Whether the path is expensive.
    public var isExpensive: Bool
    /// Whether the path is constrained (Low Data Mode).
    public var isConstrained: Bool
    /// Whether Low Power Mode is on.
    public var isLowPowerModeEnabled: Bool
    /// The device's thermal state.
    public var thermalState: ThermalState

    /// Conditions as the app reports them; by default an inexpensive, unconstrained path on a cool device.
    public init(
        isOnline: Bool, isExpensive: Bool = false, isConstrained: Bool = false, isLowPowerModeEnabled: Bool = false,
        thermalState: ThermalState = .nominal
    ) {
        self.isOnline = isOnline
        self.isExpensive = isExpensive
        self.isConstrained = isConstrained
        self.isLowPowerModeEnabled = isLowPowerModeEnabled
        self.thermalState = thermalState
    }

    /// Before the app has said anything: offline, so nothing is fetched on assumptions.
    public static let unknown = OpenMatesPrefetchConditions(isOnline: false)

    /// What blocks prefetch now, or nil when it may run.
    public var block: Block? {
        if !isOnline { return .offline }
        if isExpensive { return .expensiveNetwork }
        if isConstrained { return .constrainedNetwork }
        if isLowPowerModeEnabled { return .lowPowerMode }
        if thermalState > .fair { return .thermalState }
        return nil
    }

    /// Whether prefetch may run now.
    public var allowsPrefetch: Bool { block == nil }
}
