/// What the system reports about the device, in plain values: the network path as `NWPathMonitor` gives it,
/// Low Power Mode and the thermal state as `ProcessInfo` gives them.
///
/// It has no platform types, so the mapping to ``OpenMatesPrefetchConditions`` (``conditions``) is one pure
/// function that runs, and is tested, everywhere; the Apple glue (`OpenMatesSystemPrefetchConditions`) only
/// copies the system's values in.
public struct OpenMatesSystemSignals: Sendable, Hashable {
    /// `NWPath.Status`, without depending on Network.
    public enum PathStatus: Sendable, Hashable {
        /// A usable path.
        case satisfied
        /// No usable path.
        case unsatisfied
        /// A path that needs a connection first (a VPN on demand, a cellular data activation): not usable yet.
        case requiresConnection
    }

    /// The path's status; nil until the path monitor has reported (read as offline).
    public var pathStatus: PathStatus?
    /// `NWPath.isExpensive` (cellular, a personal hotspot).
    public var isExpensive: Bool
    /// `NWPath.isConstrained` (Low Data Mode).
    public var isConstrained: Bool
    /// `ProcessInfo.isLowPowerModeEnabled`.
    public var isLowPowerModeEnabled: Bool
    /// `ProcessInfo.thermalState.rawValue`: 0 nominal, 1 fair, 2 serious, 3 critical.
    public var thermalStateRawValue: Int

    /// Signals as read; by default nothing known about the path, Low Power off, a nominal thermal state.
    public init(
        pathStatus: PathStatus? = nil, isExpensive: Bool = false, isConstrained: Bool = false,
        isLowPowerModeEnabled: Bool = false, thermalStateRawValue: Int = 0
    ) {
        self.pathStatus = pathStatus
        self.isExpensive = isExpensive
        self.isConstrained = isConstrained
        self.isLowPowerModeEnabled = isLowPowerModeEnabled
        self.thermalStateRawValue = thermalStateRawValue
    }

    /// The prefetch conditions these signals mean: online only on a satisfied path; expensive and constrained
    /// as the path says; the thermal level from its raw value, where a value this client does not know counts
    /// as critical (a new, hotter level must not start work).
    public var conditions: OpenMatesPrefetchConditions {
        OpenMatesPrefetchConditions(
            isOnline: pathStatus == .satisfied, isExpensive: isExpensive, isConstrained: isConstrained,
            isLowPowerModeEnabled: isLowPowerModeEnabled,
            thermalState: OpenMatesPrefetchConditions.ThermalState(rawValue: thermalStateRawValue) ?? .critical)
    }
}
