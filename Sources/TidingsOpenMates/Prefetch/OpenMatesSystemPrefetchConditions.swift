#if canImport(Network) && canImport(Darwin)
    import Foundation
    import Network
    import TidingsCore

    /// The device's prefetch conditions as the system reports them, as an `AsyncSequence`: the network path from
    /// `NWPathMonitor` (satisfied, expensive, constrained), Low Power Mode from `ProcessInfo` and its
    /// `NSProcessInfoPowerStateDidChange` notification, and the thermal state from `ProcessInfo` and its
    /// `thermalStateDidChangeNotification`.
    ///
    /// Each iteration starts its own monitor and observers, yields the current conditions, then each change, and
    /// stops them when the iteration ends (the consuming task cancelled or the loop left). The mapping and the
    /// de-duplication are ``OpenMatesSystemSignals/conditions`` and ``OpenMatesPrefetchConditionsFeed``, tested on
    /// every platform; this type only copies the system's values in.
    ///
    /// For example:
    /// ```swift
    /// Task {
    ///     for await conditions in OpenMatesSystemPrefetchConditions() { await prefetcher.update(conditions) }
    /// }
    /// ```
    public struct OpenMatesSystemPrefetchConditions: AsyncSequence, Sendable {
        /// What each element is.
        public typealias Element = OpenMatesPrefetchConditions

        /// Creates the sequence; nothing is observed before it is iterated.
        public init() {}

        /// Starts the monitor and observers for one iteration.
        public func makeAsyncIterator() -> AsyncStream<OpenMatesPrefetchConditions>.Iterator {
            let info = ProcessInfo.processInfo
            let monitor = NWPathMonitor()
            let observers = LockedState<[Task<Void, Never>]>([])
            let feed = OpenMatesPrefetchConditionsFeed(
                initial: OpenMatesSystemSignals(
                    isLowPowerModeEnabled: info.isLowPowerModeEnabled, thermalStateRawValue: info.thermalState.rawValue),
                onTermination: {
                    monitor.cancel()
                    for task in observers.withLock({ $0 }) { task.cancel() }
                })
            monitor.pathUpdateHandler = { path in
                let status: OpenMatesSystemSignals.PathStatus =
                    switch path.status {
                    case .satisfied: .satisfied
                    case .requiresConnection: .requiresConnection
                    case .unsatisfied: .unsatisfied
                    @unknown default: .unsatisfied
                    }
                let expensive = path.isExpensive
                let constrained = path.isConstrained
                feed.update {
                    $0.pathStatus = status
                    $0.isExpensive = expensive
                    $0.isConstrained = constrained
                }
            }
            let lowPower = Task {
                let changes = NotificationCenter.default.notifications(named: .NSProcessInfoPowerStateDidChange)
                // Read once after subscribing: a change between the initial read and here is not lost.
                feed.update { $0.isLowPowerModeEnabled = ProcessInfo.processInfo.isLowPowerModeEnabled }
                for await _ in changes {
                    feed.update { $0.isLowPowerModeEnabled = ProcessInfo.processInfo.isLowPowerModeEnabled }
                }
            }
            let thermal = Task {
                let changes = NotificationCenter.default.notifications(
                    named: ProcessInfo.thermalStateDidChangeNotification)
                feed.update { $0.thermalStateRawValue = ProcessInfo.processInfo.thermalState.rawValue }
                for await _ in changes {
                    feed.update { $0.thermalStateRawValue = ProcessInfo.processInfo.thermalState.rawValue }
                }
            }
            observers.withLock { $0 = [lowPower, thermal] }
            monitor.start(queue: DispatchQueue(label: "tidings.openmates.prefetch-conditions"))
            return feed.conditions.makeAsyncIterator()
        }
    }
#endif
