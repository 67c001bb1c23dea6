import Foundation
import TidingsCore

/// One benchmark's outcome, printed as one JSON line and collected for docs/BENCHMARKS.md.
struct BenchResult: Codable, Sendable {
    /// Stable identifier (`B1`, `K2`, `S3`).
    var id: String
    /// What was measured, in words.
    var name: String
    /// Tidings' figure.
    var value: Double
    /// The unit of `value` and `baseline` (`ms`, `rows/s`, `bytes`).
    var unit: String
    /// The baseline measured in the same run, when the benchmark has one.
    var baseline: Double?
    /// value / baseline, when there is a baseline.
    var ratio: Double?
    /// Anything a reader needs to interpret the row (targets, sizes).
    var note: String?

    init(id: String, name: String, value: Double, unit: String, baseline: Double? = nil, note: String? = nil) {
        self.id = id
        self.name = name
        self.value = value
        self.unit = unit
        self.baseline = baseline
        self.ratio = baseline.flatMap { $0 == 0 ? nil : value / $0 }
        self.note = note
    }
}

/// Prints results as JSON lines on standard output as they are measured.
final class BenchReporter: Sendable {
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
    private struct State {
        var results: [BenchResult] = []
    }
    private let state = LockedState(State())

    /// Prints `result` as one JSON object on its own line.
    func report(_ result: BenchResult) {
        state.withLock { locked in
            locked.results.append(result)
            if let data = try? encoder.encode(result) {
                print(String(decoding: data, as: UTF8.self))
            }
        }
    }
}

/// Wall-clock time of `body` in seconds, from a monotonic clock.
func measureSeconds(_ body: () throws -> Void) rethrows -> Double {
    let clock = ContinuousClock()
    return try clock.measure(body).inSeconds
}

/// Async variant of ``measureSeconds(_:)``.
func measureSecondsAsync(_ body: () async throws -> Void) async rethrows -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    try await body()
    return start.duration(to: clock.now).inSeconds
}

/// The `q` quantile (0...1) of `samples`, by nearest rank.
func percentile(_ samples: [Double], _ q: Double) -> Double {
    guard !samples.isEmpty else { return .nan }
    let sorted = samples.sorted()
    let rank = Int((q * Double(sorted.count - 1)).rounded())
    return sorted[min(max(rank, 0), sorted.count - 1)]
}
