import Foundation
import TidingsNet

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

let webSocketCostSuite = BenchSuite(
    name: "wscost",
    abstract: "Where the pipelined WebSocket rows' time goes: server and client CPU, context switches (Linux)"
) { reporter in
    try await WebSocketCostBench.run(reporter)
}

/// The WS4/WS9 workload (5,000 pipelined 32-byte echoes) repeated, measuring what it costs each side.
///
/// On a two-core machine the Python echo server is the bottleneck of the pipelined rows: a client that
/// makes the server spend more per echo loses them however little it spends itself. These rows say what
/// each client costs the server, itself and the scheduler, per 100,000 echoes (docs/BENCHMARKS.md).
enum WebSocketCostBench {
    static let rounds = 20
    static let pipelined = 5_000
    /// Runs per side, interleaved; every row is the median.
    static let runs = 5

    struct Figures: Decodable {
        var per_s: Double
        /// The client's own CPU seconds over the pipelined rounds.
        var cpu_s: Double
        var switches: Double
        /// The server's CPU seconds over the client's whole run (filled in by the bench).
        var server_cpu_s: Double?
    }

    static func run(_ reporter: BenchReporter) async throws {
        #if os(Linux)
            let root = benchProjectRoot()
            var firstID = 1
            for secure in [false, true] {
                let echo = try await WebSocketBench.startEchoServer(root: root, secure: secure)
                let server = echo.peer
                defer { server.stop() }
                let (url, configuration, ca) = (echo.url, echo.configuration, echo.caPath)
                let (ours, theirs) = try await interleavedRounds(
                    runs,
                    tidings: {
                        try await withServerCPU(pid: server.pid) {
                            try await measureTidings(url: url, configuration: configuration)
                        }
                    },
                    baseline: {
                        try await withServerCPU(pid: server.pid) {
                            try await runPythonBaseline(
                                Figures.self, root: root, script: "ws_pipeline_cost.py",
                                arguments: [
                                    "--url", url.absoluteString, "--rounds", String(rounds), "--pipelined",
                                    String(pipelined),
                                ] + (ca.map { ["--ca", $0] } ?? []))
                        }
                    })
                let label = secure ? "wss" : "ws"
                let perHundredThousand = 100_000 / Double(rounds * pipelined)
                let rows: [BenchComparison] = [
                    (
                        "server CPU per 100,000 pipelined echoes (\(label))", "ms",
                        median(ours, \.serverMilliseconds) * perHundredThousand,
                        median(theirs, \.serverMilliseconds) * perHundredThousand
                    ),
                    (
                        "client CPU per 100,000 pipelined echoes (\(label))", "ms",
                        median(ours, \.clientMilliseconds) * perHundredThousand,
                        median(theirs, \.clientMilliseconds) * perHundredThousand
                    ),
                    (
                        "client context switches per 100,000 pipelined echoes (\(label))", "switches",
                        median(ours, \.switches) * perHundredThousand, median(theirs, \.switches) * perHundredThousand
                    ),
                    (
                        "pipelined 32 B echoes (\(label)), median of \(rounds) rounds", "msg/s", median(ours, \.per_s),
                        median(theirs, \.per_s)
                    ),
                ]
                firstID = reporter.reportComparisons(
                    rows, idPrefix: "WC", firstID: firstID,
                    baseline: "websockets 17 asyncio client, median of \(runs) interleaved runs",
                    higherIsBetter: "msg/s")
            }
        #else
            throw BenchError(description: "wscost reads /proc and runs on Linux only")
        #endif
    }

    /// One connection, 50 warm-up echoes, then `rounds` × `pipelined` echoes, as the Python twin does.
    static func measureTidings(url: URL, configuration: WebSocket.Configuration) async throws -> Figures {
        let socket = try await WebSocket.connect(to: url, configuration: configuration)
        var messages = socket.messages.makeAsyncIterator()
        for _ in 0..<50 {
            try await socket.send(text: "warm-up")
            _ = try await messages.next()
        }
        let before = ProcessCost.now()
        var rates: [Double] = []
        for _ in 0..<rounds {
            let seconds = try await measureSecondsAsync {
                let sender = Task {
                    for index in 0..<pipelined {
                        try await socket.send(text: WebSocketBench.paddedMessage("pipe ", index))
                    }
                }
                for _ in 0..<pipelined { _ = try await messages.next() }
                try await sender.value
            }
            rates.append(Double(pipelined) / seconds)
        }
        let after = ProcessCost.now()
        await socket.close()
        return Figures(
            per_s: percentile(rates, 0.5), cpu_s: after.cpuSeconds - before.cpuSeconds,
            switches: after.switches - before.switches)
    }

    #if os(Linux)
        /// Runs `body` and adds the CPU seconds process `pid` spent meanwhile (its `/proc` utime + stime).
        static func withServerCPU(pid: Int32, _ body: () async throws -> Figures) async throws -> Figures {
            let before = try processCPUSeconds(pid: pid)
            var figures = try await body()
            figures.server_cpu_s = try processCPUSeconds(pid: pid) - before
            return figures
        }

        /// Fields 14 and 15 of `/proc/<pid>/stat`, counted after the parenthesised command name (which may hold
        /// spaces), in seconds.
        static func processCPUSeconds(pid: Int32) throws -> Double {
            let text = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
            guard let close = text.lastIndex(of: ")") else {
                throw BenchError(description: "unreadable /proc/\(pid)/stat")
            }
            // After ") " come field 3 (state) onwards, so utime and stime are the 12th and 13th.
            let fields = text[text.index(after: close)...].split(separator: " ")
            guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
                throw BenchError(description: "unreadable /proc/\(pid)/stat")
            }
            return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
        }
    #endif
}

extension WebSocketCostBench.Figures {
    var serverMilliseconds: Double { (server_cpu_s ?? 0) * 1000 }
    var clientMilliseconds: Double { cpu_s * 1000 }
}

/// This process's CPU time (every thread) and context switches so far.
struct ProcessCost {
    var cpuSeconds: Double
    var switches: Double

    static func now() -> ProcessCost {
        var usage = rusage()
        #if canImport(Glibc)
            getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
            getrusage(RUSAGE_SELF, &usage)
        #endif
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
        return ProcessCost(
            cpuSeconds: seconds(usage.ru_utime) + seconds(usage.ru_stime),
            switches: Double(usage.ru_nvcsw + usage.ru_nivcsw))
    }
}
