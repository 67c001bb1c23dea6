/// The `name: value` lines a command printed (the first `: ` splits each line), as the sandbox commands print
/// what an app needs to connect.
func printedFields(_ output: String) -> [String: String] {
    var result: [String: String] = [:]
    for line in output.split(separator: "\n") {
        guard let range = line.range(of: ": ") else { continue }
        result[String(line[..<range.lowerBound])] = String(line[range.upperBound...])
    }
    return result
}
