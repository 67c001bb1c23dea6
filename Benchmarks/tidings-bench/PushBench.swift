import Foundation
import PeerSupport
import TidingsCore
import TidingsPush

/// P1–P2 of issue 12: Web Push decryption throughput against Python's http_ece in the same run, and the peak
/// resident memory of one `tidings push decrypt` process.
let pushSuite = BenchSuite(
    name: "push", abstract: "Web Push: decryptions per second vs http_ece; peak memory of push decrypt"
) { reporter in
    let root = benchProjectRoot()
    try await PushBench.decryptionRate(reporter, root: root)
    try await PushBench.decryptMemory(reporter)
}

/// P2 alone: needs the release `tidings` and GNU time, not the Python peers.
let pushMemorySuite = BenchSuite(
    name: "push-p2", abstract: "Web Push: peak memory of push decrypt only (P2; no Python peers needed)"
) { reporter in
    try await PushBench.decryptMemory(reporter)
}

enum PushBench {
    /// The largest plaintext of a 4096-byte Web Push message (RFC 8291 §4).
    static let plaintextSize = 3993
    static let seconds = 2.0

    // MARK: P1

    /// Decrypts one 4 KB message per encoding again and again for two seconds (keys and decryptor made once,
    /// as the baseline builds its key object once), on a thread of its own; then the same with http_ece.
    static func decryptionRate(_ reporter: BenchReporter, root: URL) async throws {
        var rows: [BenchComparison] = []
        struct Baseline: Decodable {
            var aes128gcm: Double
            var aesgcm: Double
        }
        let baseline = try await runPythonBaseline(
            Baseline.self, root: root, script: "push_decrypt_bench.py", arguments: ["--seconds", "\(seconds)"])
        for encoding in WebPushContentEncoding.allCases {
            let rate = try await onDedicatedThread("bench push \(encoding.rawValue)") { try measureRate(encoding) }
            rows.append(
                (
                    name:
                        "\(encoding.rawValue) decryptions of a 4096-byte message (\(plaintextSize) bytes of plaintext)",
                    unit: "decryptions/s", value: rate,
                    baseline: encoding == .aes128gcm ? baseline.aes128gcm : baseline.aesgcm
                ))
        }
        _ = reporter.reportComparisons(
            rows, idPrefix: "P1.", firstID: 1, baseline: "Python http_ece 1.2.1 (cryptography/OpenSSL)",
            higherIsBetter: "decryptions/s", warnWhenSlower: true)
    }

    private static func measureRate(_ encoding: WebPushContentEncoding) throws -> Double {
        let keys = try WebPushSubscriptionKeys.generate()
        let plaintext = TidingsCrypto.SecureRandom.bytes(plaintextSize)
        let message = try WebPushEncryptor.encrypt(
            plaintext, receiverPublicKey: keys.publicKey, authSecret: keys.authSecret, encoding: encoding)
        let decryptor = WebPushDecryptor(keys: keys)
        guard try decryptor.decrypt(message.body, encoding: encoding, legacy: message.legacy) == plaintext else {
            throw BenchError(description: "P1: the \(encoding.rawValue) message did not decrypt to its plaintext")
        }
        let clock = ContinuousClock()
        let start = clock.now
        var count = 0
        var elapsed = 0.0
        repeat {
            _ = try decryptor.decrypt(message.body, encoding: encoding, legacy: message.legacy)
            count += 1
            elapsed = start.duration(to: clock.now).inSeconds
        } while elapsed < seconds
        return Double(count) / elapsed
    }

    // MARK: P2

    /// GNU time measures the child's peak RSS from the `wait4` of a child it forked itself: a child spawned
    /// straight from this (larger) process would inherit this process's RSS into its `ru_maxrss` (Linux keeps
    /// the pre-exec high-water mark, and posix_spawn's child shares our memory until it execs).
    static let gnuTime = "/usr/bin/time"

    /// Runs `tidings push decrypt --store --account` (decrypt, then the notification policy's decision recorded in
    /// its store: the path a notification service extension runs) five times per encoding on a 4096-byte message
    /// read from a file on standard input, under GNU time, and reports the largest peak RSS against the 24 MB limit
    /// of a notification service extension. Each run decrypts another notification into the same store (the first
    /// run creates it), so every run raises and writes. `tidings --version` shows the executable's own floor, and
    /// /bin/true under the same GNU time the measurement's.
    static func decryptMemory(_ reporter: BenchReporter) async throws {
        // TIDINGS_BENCH_TIDINGS names another build of the tool (e.g. one linked with --static-swift-stdlib).
        let tidings =
            ProcessInfo.processInfo.environment["TIDINGS_BENCH_TIDINGS"].map { URL(fileURLWithPath: $0) }
            ?? builtExecutable(named: "tidings")
        guard FileManager.default.isExecutableFile(atPath: tidings.path) else {
            throw BenchError(
                description: "P2 runs the tidings executable next to tidings-bench (\(tidings.path)): "
                    + "build it first with `swift build -c release --product tidings`")
        }
        guard FileManager.default.isExecutableFile(atPath: gnuTime) else {
            throw BenchError(description: "P2 needs GNU time at \(gnuTime) (Debian package `time`)")
        }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("tidings-bench-push-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let floor = try await peakKilobytes([gnuTime, "-f", "%M", "/bin/true"], input: nil)
        let limit = 24.0 * 1024 * 1024
        var id = 1
        for encoding in WebPushContentEncoding.allCases {
            let keys = try WebPushSubscriptionKeys.generate()
            let store = directory.appendingPathComponent("policy-\(encoding.rawValue).sqlite")
            var peak = 0
            for run in 1...5 {
                let message = try WebPushEncryptor.encrypt(
                    mastodonPayload(notificationID: run), receiverPublicKey: keys.publicKey,
                    authSecret: keys.authSecret, encoding: encoding)
                let body = directory.appendingPathComponent("\(encoding.rawValue)-\(run).bin")
                try Data(message.body).write(to: body)
                var arguments = [
                    gnuTime, "-f", "%M", tidings.path, "push", "decrypt", "--private-key", keys.base64URLPrivateKey,
                    "--auth", keys.base64URLAuthSecret, "--encoding", encoding.rawValue, "--store", store.path,
                    "--account", "bench@mastodon.example",
                ]
                if let legacy = message.legacy {
                    arguments += [
                        "--dh", WebPushBase64URL.encode(legacy.senderPublicKey), "--salt",
                        WebPushBase64URL.encode(legacy.salt),
                    ]
                }
                peak = max(peak, try await peakKilobytes(arguments, input: body, expectPrefixes: ["raise "]))
            }
            reporter.report(
                BenchResult(
                    id: "P2.\(id)",
                    name: "peak RSS of one `tidings push decrypt --store --account` (\(encoding.rawValue), "
                        + "4096-byte body, policy decision recorded)",
                    value: Double(peak) * 1024, unit: "bytes", baseline: limit,
                    note:
                        "baseline: the 24 MB limit (must stay below); largest of 5 runs; GNU time's floor (/bin/true) "
                        + "\(floor) KB; binary \(tidings.path)"))
            id += 1
        }
        // Local time on the decrypt path: quiet hours around the current hour (held) and away from it (raised), and
        // a digest (always held), each read from a TZif file, not through ICU. The windows are placed from the
        // current UTC hour so both outcomes are measured whatever the time of the run.
        let hour = Int(Date().timeIntervalSince1970 / 3600) % 24
        func window(from start: Int, hours: Int) -> String {
            String(format: "%02d:00-%02d:00", (start + 24) % 24, (start + hours) % 24)
        }
        let held = window(from: hour - 1, hours: 3)
        let raised = window(from: hour + 4, hours: 3)
        let localTime: [(name: String, arguments: [String], prefix: String)] = [
            ("--quiet-hours \(held) (held)", ["--quiet-hours", held, "--time-zone", "Etc/UTC"], "hold until "),
            ("--quiet-hours \(raised) (raised)", ["--quiet-hours", raised, "--time-zone", "Etc/UTC"], "raise "),
            ("--digest 8,18", ["--digest", "8,18"], "hold until "),
        ]
        for (offset, variant) in localTime.enumerated() {
            let keys = try WebPushSubscriptionKeys.generate()
            let store = directory.appendingPathComponent("policy-local-\(offset).sqlite")
            var peak = 0
            for run in 1...5 {
                let message = try WebPushEncryptor.encrypt(
                    mastodonPayload(notificationID: run), receiverPublicKey: keys.publicKey,
                    authSecret: keys.authSecret, encoding: .aes128gcm)
                let body = directory.appendingPathComponent("local-\(offset)-\(run).bin")
                try Data(message.body).write(to: body)
                let arguments =
                    [
                        gnuTime, "-f", "%M", tidings.path, "push", "decrypt", "--private-key", keys.base64URLPrivateKey,
                        "--auth", keys.base64URLAuthSecret, "--store", store.path, "--account",
                        "bench@mastodon.example",
                    ] + variant.arguments
                peak = max(peak, try await peakKilobytes(arguments, input: body, expectPrefixes: [variant.prefix]))
            }
            reporter.report(
                BenchResult(
                    id: "P2.\(id + 1 + offset)",
                    name: "peak RSS of one `tidings push decrypt --store --account \(variant.name)` (aes128gcm, "
                        + "4096-byte body, decided in the device's zone)",
                    value: Double(peak) * 1024, unit: "bytes", baseline: limit,
                    note: "baseline: the 24 MB limit (must stay below); largest of 5 runs"))
        }
        var versionPeak = 0
        for _ in 0..<5 {
            versionPeak = max(
                versionPeak, try await peakKilobytes([gnuTime, "-f", "%M", tidings.path, "--version"], input: nil))
        }
        reporter.report(
            BenchResult(
                id: "P2.\(id)", name: "peak RSS of `tidings --version` (the executable's floor)",
                value: Double(versionPeak) * 1024, unit: "bytes", baseline: limit,
                note: "baseline: the 24 MB limit; largest of 5 runs"))
    }

    /// A Mastodon Web Push payload (content mode) for a mention, its body padded so that the plaintext is the largest
    /// a 4096-byte message carries.
    static func mastodonPayload(notificationID: Int) -> [UInt8] {
        func payload(_ body: String) -> [UInt8] {
            let object: JSONValue = .object([
                "notification_id": .string("\(notificationID)"), "notification_type": .string("mention"),
                "title": .string("Bench mentioned you"), "body": .string(body),
                "icon": .string("https://mastodon.example/avatars/bench.png"), "preferred_locale": .string("en"),
            ])
            return Array(object.jsonString().utf8)
        }
        let padding = max(0, plaintextSize - payload("").count)
        return payload(String(repeating: "x", count: padding))
    }

    /// Runs `command` under GNU time (its last standard-error line is `%M`: peak RSS in kilobytes) and checks
    /// that its output starts with one of `expectPrefixes` when any are given.
    private static func peakKilobytes(_ command: [String], input: URL?, expectPrefixes: [String] = []) async throws
        -> Int
    {
        let outcome = try await ChildProcess.run(
            executable: command[0], arguments: Array(command.dropFirst()),
            standardInput: input.map { .file($0.path) } ?? .nullDevice, timeout: .seconds(60))
        guard outcome.termination == .exited(0) else {
            throw BenchError(
                description:
                    "P2: \(command.dropFirst(3).prefix(3).joined(separator: " ")) ended with \(outcome.termination): "
                    + String(decoding: outcome.standardError, as: UTF8.self))
        }
        let output = String(decoding: outcome.standardOutput, as: UTF8.self)
        if !expectPrefixes.isEmpty, !expectPrefixes.contains(where: output.hasPrefix) {
            throw BenchError(
                description:
                    "P2: push decrypt printed '\(output.prefix(200))', not '\(expectPrefixes.joined(separator: "' or '"))…'"
            )
        }
        let lines = String(decoding: outcome.standardError, as: UTF8.self).split(separator: "\n")
        guard let last = lines.last, let kilobytes = Int(last.trimmingCharacters(in: .whitespaces)) else {
            throw BenchError(description: "P2: GNU time printed no peak RSS")
        }
        return kilobytes
    }
}
