/// Runs a workload `rounds` times with Tidings and with its baseline, alternating which side goes first.
///
/// One run of a sub-second workload on a shared two-core machine swings by ±20 % from one run to the
/// next, far more than the difference a row is meant to show; repeating it and alternating the order
/// lets drift in the machine's load (a neighbour's build starting, the CPU clock changing) weigh on
/// both sides alike, and the median of the rounds ignores a single disturbed one.
func interleavedRounds<Figures>(
    _ rounds: Int, tidings: () async throws -> Figures, baseline: () async throws -> Figures
) async throws -> (tidings: [Figures], baseline: [Figures]) {
    var ours: [Figures] = []
    var theirs: [Figures] = []
    for round in 0..<max(rounds, 1) {
        if round.isMultiple(of: 2) {
            ours.append(try await tidings())
            theirs.append(try await baseline())
        } else {
            theirs.append(try await baseline())
            ours.append(try await tidings())
        }
    }
    return (ours, theirs)
}

/// The median of one figure over the rounds of ``interleavedRounds(_:tidings:baseline:)``.
func median<Figures>(_ rounds: [Figures], _ figure: KeyPath<Figures, Double>) -> Double {
    percentile(rounds.map { $0[keyPath: figure] }, 0.5)
}
