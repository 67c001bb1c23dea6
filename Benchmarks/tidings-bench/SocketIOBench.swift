import Foundation
import TidingsCore
import TidingsNet

/// `tidings-bench socketio`: Tidings' Socket.IO client against python-socketio's own AsyncClient,
/// both talking to one python-socketio 5 server (aiohttp) on loopback, over WebSocket and over
/// long-polling, in the same run.
let socketIOSuite = BenchSuite(
    name: "socketio",
    abstract: "Socket.IO client vs python-socketio AsyncClient: connect, ack RTT, pipelined acks, 64 KiB"
) { reporter in
    try await SocketIOBench.run(reporter)
}

enum SocketIOBench {
    /// The workload, the same on both sides (see Tests/Peers/socketio_bench_client.py).
    static let connects = 20
    static let acks = 1_000
    static let pipelined = 2_000
    static let binaryRounds = 20
    /// How many times each side runs the whole workload; every row is the median over the rounds.
    static let rounds = 5

    struct Figures: Decodable {
        var connect_ms: Double
        var ack_p50_ms: Double
        var ack_p99_ms: Double
        var pipelined_acks_per_s: Double
        var binary_64k_ms: Double
    }

    static func progress(_ text: String) {
        FileHandle.standardError.write(Data("socketio: \(text)\n".utf8))
    }

    static func run(_ reporter: BenchReporter) async throws {
        let root = benchProjectRoot()
        let server = try await BenchPeer.start(root: root, script: "socketio_server.py")
        defer { server.stop() }
        let url = URL(string: "http://127.0.0.1:\(server.port)")!
        var firstID = 1
        // Over polling python-socketio's own client refuses a response with more than 16 packets, so
        // both clients keep at most 16 acks in flight there; over WebSocket all are sent at once.
        for (label, transports, pythonName, window) in [
            ("WebSocket", EngineIOClient.Transports.webSocket, "websocket", pipelined),
            ("polling", EngineIOClient.Transports.polling, "polling", 16),
        ] {
            progress("\(label): warming up")
            _ = try await measureTidings(url: url, transports: transports, window: window, scale: 10)
            let (tidingsRounds, pythonRounds) = try await interleavedRounds(
                rounds,
                tidings: {
                    progress("\(label): Tidings")
                    return try await measureTidings(url: url, transports: transports, window: window, scale: 1)
                },
                baseline: {
                    progress("\(label): python-socketio")
                    return try await runPython(root: root, url: url, transport: pythonName, window: window)
                })
            let tidings = Figures(medianOf: tidingsRounds)
            let python = Figures(medianOf: pythonRounds)
            let rows: [BenchComparison] = [
                ("connect time (\(label)), median", "ms", tidings.connect_ms, python.connect_ms),
                ("ack round trip (\(label)), p50", "ms", tidings.ack_p50_ms, python.ack_p50_ms),
                ("ack round trip (\(label)), p99", "ms", tidings.ack_p99_ms, python.ack_p99_ms),
                (
                    "pipelined acks (\(label)), \(pipelined) with \(window) in flight", "acks/s",
                    tidings.pipelined_acks_per_s, python.pipelined_acks_per_s
                ),
                ("64 KiB binary ack (\(label)), median", "ms", tidings.binary_64k_ms, python.binary_64k_ms),
            ]
            firstID = reporter.reportComparisons(
                rows, idPrefix: "SIO", firstID: firstID,
                baseline: "python-socketio AsyncClient, median of \(rounds) interleaved rounds",
                higherIsBetter: "acks/s", warnWhenSlower: true)
        }
    }

    /// Runs the workload with Tidings' client; `scale` divides the counts (for a warm-up).
    static func measureTidings(
        url: URL, transports: EngineIOClient.Transports, window: Int, scale: Int
    ) async throws -> Figures {
        let configuration = SocketIOClient.Configuration(reconnects: false)
        var connectTimes: [Double] = []
        for _ in 0..<max(connects / scale, 1) {
            let client = SocketIOClient(url: url, transports: transports, configuration: configuration)
            connectTimes.append(try await measureSecondsAsync { try await client.connect() } * 1000)
            await client.disconnect()
        }

        progress("  round trips")
        let client = SocketIOClient(url: url, transports: transports, configuration: configuration)
        try await client.connect()
        for index in 0..<50 { _ = try await client.emitWithAck("echo", .int(Int64(index))) }

        var roundTrips: [Double] = []
        for index in 0..<max(acks / scale, 1) {
            roundTrips.append(
                try await measureSecondsAsync { _ = try await client.emitWithAck("echo", .int(Int64(index))) } * 1000)
        }

        progress("  pipelined")
        let inFlight = max(pipelined / scale, 1)
        let pipelinedSeconds = try await measureSecondsAsync {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<inFlight {
                    if index >= window { try await group.next() }
                    group.addTask {
                        _ = try await client.emitWithAck("echo", .int(Int64(index)), timeout: .seconds(60))
                    }
                }
                try await group.waitForAll()
            }
        }

        progress("  64 KiB")
        let blob = (0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        var binaryTimes: [Double] = []
        for _ in 0..<max(binaryRounds / scale, 1) {
            var reply: [JSONValue] = []
            binaryTimes.append(
                try await measureSecondsAsync { reply = try await client.emitWithAck("echo", .binary(blob)) } * 1000)
            guard reply == [.binary(blob)] else { throw BenchError(description: "binary echo mismatch") }
        }
        await client.disconnect()
        return Figures(
            connect_ms: percentile(connectTimes, 0.5), ack_p50_ms: percentile(roundTrips, 0.5),
            ack_p99_ms: percentile(roundTrips, 0.99), pipelined_acks_per_s: Double(inFlight) / pipelinedSeconds,
            binary_64k_ms: percentile(binaryTimes, 0.5))
    }

    /// Runs the Python baseline as a subprocess and decodes its JSON line.
    static func runPython(root: URL, url: URL, transport: String, window: Int) async throws -> Figures {
        try await runPythonBaseline(
            Figures.self, root: root, script: "socketio_bench_client.py",
            arguments: [
                "--url", url.absoluteString, "--transport", transport, "--connects", String(connects), "--acks",
                String(acks), "--pipelined", String(pipelined), "--binary", String(binaryRounds), "--window",
                String(window),
            ])
    }
}

extension SocketIOBench.Figures {
    /// Each figure's median over `rounds`.
    init(medianOf rounds: [Self]) {
        self.init(
            connect_ms: median(rounds, \.connect_ms), ack_p50_ms: median(rounds, \.ack_p50_ms),
            ack_p99_ms: median(rounds, \.ack_p99_ms),
            pipelined_acks_per_s: median(rounds, \.pipelined_acks_per_s),
            binary_64k_ms: median(rounds, \.binary_64k_ms))
    }
}
