import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A named group of benchmarks: `swift run -c release tidings-bench <suite>`.
struct BenchSuite: Sendable {
    let name: String
    let abstract: String
    let run: @Sendable (BenchReporter) async throws -> Void
}

let suites: [BenchSuite] = [
    storeSuite,
    kecalekSuite,
    socketIOSuite,
    webSocketSuite,
    webSocketCostSuite,
    mastodonSuite,
    pushSuite,
    pushMemorySuite,
    openMatesSuite,
]

let usage = """
    USAGE: tidings-bench <suite>...

    Prints one JSON object per line per benchmark: {"id","name","value","unit","baseline","ratio"}.

    SUITES:
    \(suites.map { "  \($0.name.padding(toLength: 10, withPad: " ", startingAt: 0))\($0.abstract)" }.joined(separator: "\n"))
      all       Every suite in turn.

    """

let words = Array(CommandLine.arguments.dropFirst())
if words.isEmpty || words.contains("-h") || words.contains("--help") {
    print(usage, terminator: "")
    exit(words.isEmpty ? 64 : 0)
}
var selected: [BenchSuite] = []
for word in words {
    if word == "all" {
        selected = suites
    } else if let suite = suites.first(where: { $0.name == word }) {
        selected.append(suite)
    } else {
        FileHandle.standardError.write(Data("Error: unknown suite '\(word)'.\n\(usage)".utf8))
        exit(64)
    }
}
// Suites that run the Python peers: without the virtualenv, one line saying what to run, and EX_UNAVAILABLE.
let suitesNeedingPeers: Set = [socketIOSuite.name, webSocketSuite.name, webSocketCostSuite.name, pushSuite.name]
if selected.contains(where: { suitesNeedingPeers.contains($0.name) }) {
    requirePythonPeers(root: benchProjectRoot())
}
let reporter = BenchReporter()
do {
    for suite in selected { try await suite.run(reporter) }
} catch {
    FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
    exit(1)
}
