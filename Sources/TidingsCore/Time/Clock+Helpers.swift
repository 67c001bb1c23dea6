extension Duration {
    /// The duration in seconds as a `Double` (attosecond precision is lost; fine for display and rates).
    public var inSeconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }

    /// A duration from a possibly fractional, possibly huge number of seconds, to the millisecond
    /// (rounded down): NaN and negative values become zero, values beyond ~292 years (and +infinity)
    /// are capped there, so parsed server input can never trap.
    public static func clampedSeconds(_ value: Double) -> Duration {
        guard !value.isNaN, value > 0 else { return .zero }
        let capped = min(value, 9.2e9)
        return .milliseconds(Int64((capped * 1000).rounded(.down)))
    }
}
