import Foundation

/// One figure measured with Tidings and with a baseline in the same run: what was measured, the unit of
/// both figures (`ms`, `acks/s`), Tidings' figure and the baseline's.
typealias BenchComparison = (name: String, unit: String, value: Double, baseline: Double)

extension BenchReporter {
    /// Reports `rows` as `<idPrefix><firstID>`, `<idPrefix><firstID + 1>`, … and returns the next free
    /// number, so a suite that measures the same rows once per transport numbers them on.
    ///
    /// Each row's note names the baseline and says whether higher or lower is better: higher for rows in
    /// `higherIsBetter`'s unit (a rate), lower for the rest (a time). With `warnWhenSlower`, a row where
    /// Tidings does not beat the baseline also gets a warning on standard error, and every row is flushed
    /// as it is reported (a pipe would otherwise see the rows only at exit).
    func reportComparisons(
        _ rows: [BenchComparison], idPrefix: String, firstID: Int, baseline: String, higherIsBetter unit: String,
        warnWhenSlower: Bool = false
    ) -> Int {
        for (offset, row) in rows.enumerated() {
            let higherIsBetter = row.unit == unit
            report(
                BenchResult(
                    id: "\(idPrefix)\(firstID + offset)", name: row.name, value: row.value, unit: row.unit,
                    baseline: row.baseline,
                    note: "baseline: \(baseline); \(higherIsBetter ? "higher" : "lower") is better"))
            guard warnWhenSlower else { continue }
            fflush(nil)
            let wins = higherIsBetter ? row.value > row.baseline : row.value < row.baseline
            if !wins {
                FileHandle.standardError.write(Data("warning: Tidings does not beat Python on '\(row.name)'\n".utf8))
            }
        }
        return firstID + rows.count
    }
}
