import Foundation
import TidingsNet

/// `tidings-bench websocket`: Tidings' WebSocket client against the `websockets` library's asyncio
/// client, both talking to one `websockets` echo server (Tests/Peers/ws_peer.py) on loopback, over
/// ws and wss, in the same run.
let webSocketSuite = BenchSuite(
    name: "websocket",
    abstract: "WebSocket client vs Python websockets client: connect, echo RTT, pipelined echoes, 1 MiB"
) { reporter in
    try await WebSocketBench.run(reporter)
}

enum WebSocketBench {
    /// The workload, the same on both sides (see Tests/Peers/ws_bench_client.py).
    static let connects = 20
    static let echoes = 1_000
    static let pipelined = 5_000
    static let bigRounds = 10
    /// How many times each side runs the whole workload; every row is the median over the rounds.
    static let rounds = 5

    struct Figures: Decodable {
        var connect_ms: Double
        var echo_p50_ms: Double
        var echo_p99_ms: Double
        var pipelined_per_s: Double
        var big_ms: Double
    }

    /// `ws_peer.py` on loopback (with the test CA's certificate when `secure`), the URL of its echo path, a client
    /// configuration that trusts that CA and sends no pings, and the CA file's path for the Python clients.
    struct EchoServer {
        let peer: BenchPeer
        let url: URL
        let configuration: WebSocket.Configuration
        let caPath: String?
    }

    static func startEchoServer(root: URL, secure: Bool) async throws -> EchoServer {
        let tls = root.appendingPathComponent("Tests/Fixtures/tls")
        let arguments =
            secure
            ? [
                "--tls-cert", tls.appendingPathComponent("server.pem").path, "--tls-key",
                tls.appendingPathComponent("server.key").path,
            ] : []
        let peer = try await BenchPeer.start(root: root, script: "ws_peer.py", arguments: arguments)
        var configuration = WebSocket.Configuration(pingInterval: nil)
        configuration.tls.additionalTrustedCertificates = [
            try String(contentsOf: tls.appendingPathComponent("ca.pem"), encoding: .utf8)
        ]
        return EchoServer(
            peer: peer, url: URL(string: "\(secure ? "wss" : "ws")://127.0.0.1:\(peer.port)/echo")!,
            configuration: configuration, caPath: secure ? tls.appendingPathComponent("ca.pem").path : nil)
    }

    static func run(_ reporter: BenchReporter) async throws {
        let root = benchProjectRoot()
        var firstID = 1
        for secure in [false, true] {
            let server = try await startEchoServer(root: root, secure: secure)
            defer { server.peer.stop() }
            let (url, configuration) = (server.url, server.configuration)
            _ = try await measureTidings(url: url, configuration: configuration, scale: 10)
            let (tidingsRounds, pythonRounds) = try await interleavedRounds(
                rounds, tidings: { try await measureTidings(url: url, configuration: configuration, scale: 1) },
                baseline: {
                    try await runPython(root: root, url: url, ca: server.caPath)
                })
            let tidings = Figures(medianOf: tidingsRounds)
            let python = Figures(medianOf: pythonRounds)
            let label = secure ? "wss" : "ws"
            let rows: [BenchComparison] = [
                ("connect time (\(label)), median", "ms", tidings.connect_ms, python.connect_ms),
                ("32 B text echo round trip (\(label)), p50", "ms", tidings.echo_p50_ms, python.echo_p50_ms),
                ("32 B text echo round trip (\(label)), p99", "ms", tidings.echo_p99_ms, python.echo_p99_ms),
                (
                    "pipelined 32 B echoes (\(label)), \(pipelined) in flight", "msg/s", tidings.pipelined_per_s,
                    python.pipelined_per_s
                ),
                ("1 MiB binary echo (\(label)), median", "ms", tidings.big_ms, python.big_ms),
            ]
            firstID = reporter.reportComparisons(
                rows, idPrefix: "WS", firstID: firstID,
                baseline: "websockets 17 asyncio client, median of \(rounds) interleaved rounds",
                higherIsBetter: "msg/s")
        }
    }

    /// Runs the workload with Tidings' client; `scale` divides the counts (for a warm-up).
    static func measureTidings(url: URL, configuration: WebSocket.Configuration, scale: Int) async throws -> Figures {
        var connectTimes: [Double] = []
        for _ in 0..<max(connects / scale, 1) {
            var socket: WebSocket?
            connectTimes.append(
                try await measureSecondsAsync {
                    socket = try await WebSocket.connect(to: url, configuration: configuration)
                }
                    * 1000)
            await socket?.close()
        }
        let socket = try await WebSocket.connect(to: url, configuration: configuration)
        var messages = socket.messages.makeAsyncIterator()
        for _ in 0..<50 {
            try await socket.send(text: "warm-up")
            _ = try await messages.next()
        }
        var roundTrips: [Double] = []
        for index in 0..<max(echoes / scale, 1) {
            let text = paddedMessage("echo ", index)
            roundTrips.append(
                try await measureSecondsAsync {
                    try await socket.send(text: text)
                    _ = try await messages.next()
                } * 1000)
        }
        let count = max(pipelined / scale, 1)
        let pipelinedSeconds = try await measureSecondsAsync {
            let sender = Task {
                for index in 0..<count {
                    try await socket.send(text: paddedMessage("pipe ", index))
                }
            }
            for _ in 0..<count { _ = try await messages.next() }
            try await sender.value
        }
        let blob = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        var bigTimes: [Double] = []
        for _ in 0..<max(bigRounds / scale, 1) {
            var reply: WebSocketMessage?
            bigTimes.append(
                try await measureSecondsAsync {
                    try await socket.send(binary: blob)
                    reply = try await messages.next()
                } * 1000)
            guard reply == .binary(blob) else { throw BenchError(description: "1 MiB echo mismatch") }
        }
        await socket.close()
        return Figures(
            connect_ms: percentile(connectTimes, 0.5), echo_p50_ms: percentile(roundTrips, 0.5),
            echo_p99_ms: percentile(roundTrips, 0.99), pipelined_per_s: Double(count) / pipelinedSeconds,
            big_ms: percentile(bigTimes, 0.5))
    }

    /// `prefix` followed by `index` in 27 zero-padded digits (32 bytes for a 5-byte prefix), built in
    /// one allocation like the Python baseline's `f"pipe {index:027d}"`: the harness's own string
    /// building must not weigh on the client's figures (concatenating padded pieces cost about as much
    /// CPU as the client's whole send path).
    static func paddedMessage(_ prefix: StaticString, _ index: Int) -> String {
        let digits = 27
        return String(unsafeUninitializedCapacity: prefix.utf8CodeUnitCount + digits) { buffer in
            var offset = 0
            prefix.withUTF8Buffer { for byte in $0 { buffer[offset] = byte; offset += 1 } }
            var value = index.magnitude
            for position in stride(from: offset + digits - 1, through: offset, by: -1) {
                buffer[position] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            }
            return offset + digits
        }
    }

    static func runPython(root: URL, url: URL, ca: String?) async throws -> Figures {
        try await runPythonBaseline(
            Figures.self, root: root, script: "ws_bench_client.py",
            arguments: [
                "--url", url.absoluteString, "--connects", String(connects), "--echoes", String(echoes),
                "--pipelined", String(pipelined), "--big", String(bigRounds),
            ] + (ca.map { ["--ca", $0] } ?? []))
    }
}

extension WebSocketBench.Figures {
    /// Each figure's median over `rounds`.
    init(medianOf rounds: [Self]) {
        self.init(
            connect_ms: median(rounds, \.connect_ms), echo_p50_ms: median(rounds, \.echo_p50_ms),
            echo_p99_ms: median(rounds, \.echo_p99_ms), pipelined_per_s: median(rounds, \.pipelined_per_s),
            big_ms: median(rounds, \.big_ms))
    }
}
