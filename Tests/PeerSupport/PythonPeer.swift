import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real server from PyPI (python-socketio, websockets, aiohttp), started on a free loopback
/// port and stopped by process id.
///
/// Peers are scripts in `Tests/Peers/`, run with the project's `.venv/bin/python` (which
/// `scripts/install-peers` installs). A script takes `--port 0` (and any extra arguments), binds
/// 127.0.0.1, and prints `READY <port>` on a line of its own once it accepts connections.
/// A missing virtualenv is an error, never a skip.
///
/// Where work runs: the peer is spawned with `posix_spawn` and reaped by a thread of its own
/// (``ChildProcess``); its `READY` line is read on another dedicated thread with a deadline. No thread of
/// Swift's cooperative pool ever waits for a peer, and at most ``concurrentStarts`` peers boot at once.
/// A peer's standard input is a pipe from this process: when the test process ends, however it ends,
/// the peer reads end-of-file and exits, so no peer outlives its tests.
public final class PythonPeer: Sendable {
    /// The loopback port the peer listens on.
    public let port: Int
    /// The peer's process id.
    public let pid: Int32
    /// Whether the peer is shared by the tests of a suite (``shared(_:arguments:)``): ``stop()`` leaves it.
    public let isShared: Bool
    private let child: ChildProcess
    private let errorLog: URL
    private let stopping = CancelFlag()

    /// Why a peer could not be started.
    public struct StartError: Error, CustomStringConvertible {
        /// What went wrong, with the end of the peer's standard error when it ran.
        public let description: String
    }

    /// How many peers may be booting (spawned, not yet `READY`) at once.
    public static let concurrentStarts = 2
    private static let startGate = StartGate(limit: concurrentStarts)
    /// How long a stopped peer has between SIGTERM and SIGKILL.
    public static let stopGracePeriod: Duration = .seconds(2)

    private init(port: Int, child: ChildProcess, errorLog: URL, isShared: Bool) {
        self.port = port
        self.pid = child.pid
        self.child = child
        self.errorLog = errorLog
        self.isShared = isShared
    }

    deinit { terminate() }

    /// The project's root folder (the one holding Package.swift).
    public static let projectRoot: URL = {
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while url.path != "/" {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
                return url
            }
            url.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    }()

    /// The Python interpreter of the project's virtualenv.
    public static var python: URL { projectRoot.appendingPathComponent(".venv/bin/python") }

    /// The interpreter of `.venv-eio3/` (Tests/Peers/requirements-eio3.txt): python-socketio 4.x over
    /// python-engineio 3.x, the last releases that speak Engine.IO 3 as socket.io 2.x servers do.
    public static var pythonEIO3: URL { projectRoot.appendingPathComponent(".venv-eio3/bin/python") }

    /// Starts `Tests/Peers/<script>` and waits until it prints `READY <port>`.
    ///
    /// - Parameters:
    ///   - script: the file name inside `Tests/Peers/`.
    ///   - arguments: extra arguments after `--port <port>`.
    ///   - port: the port to ask for; 0 lets the peer pick a free one.
    ///   - readyTimeout: how long the peer may take to start once it is spawned (waiting for a start
    ///     slot does not count).
    ///   - python: the interpreter (``python`` by default; ``pythonEIO3`` for Engine.IO 3 peers).
    /// - Throws: ``StartError`` when the virtualenv or script is missing, or the peer exits or stays
    ///   silent (it is killed then); its standard error is included. `CancellationError` when cancelled.
    public static func start(
        _ script: String,
        arguments: [String] = [],
        port: Int = 0,
        readyTimeout: TimeInterval = 60,
        python: URL = PythonPeer.python
    ) async throws -> PythonPeer {
        try await start(
            script, arguments: arguments, port: port, readyTimeout: readyTimeout, isShared: false, python: python)
    }

    /// The peer for `script` with `arguments` that every caller in this test process shares: started on
    /// first use, never stopped by a test, and gone with the test process.
    ///
    /// For suites whose tests do not change the peer's state for each other; it keeps a 2-core machine from
    /// booting one interpreter per test. A failed start is reported to every caller waiting for it, and
    /// the next call tries again. `python` is the interpreter, as for ``start(_:arguments:port:readyTimeout:python:)``.
    public static func shared(
        _ script: String, arguments: [String] = [], python: URL = PythonPeer.python
    ) async throws -> PythonPeer {
        try await SharedPeers.registry.peer(script, arguments: arguments, python: python)
    }

    static func start(
        _ script: String, arguments: [String], port: Int, readyTimeout: TimeInterval, isShared: Bool,
        python: URL = PythonPeer.python
    ) async throws -> PythonPeer {
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw StartError(
                description: "No Python virtualenv at \(python.path): run scripts/install-peers (scripts/test runs it)."
            )
        }
        let scriptURL = projectRoot.appendingPathComponent("Tests/Peers/\(script)")
        guard FileManager.default.fileExists(atPath: scriptURL.path) else {
            throw StartError(description: "No peer script at \(scriptURL.path).")
        }
        return try await startGate.withSlot {
            try await boot(
                python: python, script: scriptURL, arguments: arguments, port: port, readyTimeout: readyTimeout,
                isShared: isShared)
        }
    }

    private static func boot(
        python: URL, script: URL, arguments: [String], port: Int, readyTimeout: TimeInterval, isShared: Bool
    ) async throws -> PythonPeer {
        let errorLog = FileManager.default.temporaryDirectory
            .appendingPathComponent("tidings-peer-\(UUID().uuidString).log")
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONUNBUFFERED"] = "1"
        // Tells the peer that its standard input is our lifeline (Tests/Peers/peer_lifeline.py).
        environment["TIDINGS_PEER_LIFELINE"] = "stdin"
        let child: ChildProcess
        do {
            child = try ChildProcess.spawn(
                executable: python.path, arguments: ["-u", script.path, "--port", String(port)] + arguments,
                environment: environment, standardInput: .pipe, standardOutput: .pipe,
                standardError: .file(errorLog.path))
        } catch {
            throw StartError(description: "Peer \(script.lastPathComponent) could not be spawned: \(error)")
        }
        let read = try await child.readOutput(timeout: .seconds(readyTimeout)) { readyPort(in: $0) != nil }
        guard let boundPort = readyPort(in: read.data) else {
            child.signal(SIGKILL)
            let ended = await child.waitForExit(timeout: .seconds(10))
            try Task.checkCancellation()
            let log = (try? String(contentsOf: errorLog, encoding: .utf8)) ?? ""
            removeLog(errorLog)
            let how = ended.map { "it ended with \($0)" } ?? "it stayed silent for \(readyTimeout) s"
            throw StartError(
                description: "Peer \(script.lastPathComponent) did not become ready (\(how)):\n\(log.suffix(4000))")
        }
        child.drainOutput()
        return PythonPeer(port: boundPort, child: child, errorLog: errorLog, isShared: isShared)
    }

    /// The port of the first complete `READY <port>` line in `output`.
    static func readyPort(in output: Data) -> Int? {
        for line in output.split(separator: 0x0A, omittingEmptySubsequences: false).dropLast() {
            let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("READY "), let port = Int(text.dropFirst(6)), (1...65_535).contains(port) {
                return port
            }
        }
        return nil
    }

    private static func removeLog(_ log: URL) {
        // TIDINGS_KEEP_PEER_LOGS=1 keeps each peer's standard error in the temporary folder for debugging.
        if ProcessInfo.processInfo.environment["TIDINGS_KEEP_PEER_LOGS"] == nil {
            try? FileManager.default.removeItem(at: log)
        }
    }

    /// What the peer wrote to standard error so far.
    public var standardError: String { (try? String(contentsOf: errorLog, encoding: .utf8)) ?? "" }

    /// Whether the peer process has ended and been reaped.
    public var hasExited: Bool { child.exitStatus != nil }

    /// Stops the peer without waiting: SIGTERM now, SIGKILL after ``stopGracePeriod`` if it is still
    /// there; the reaping happens on the peer's own reaper thread. Idempotent; nothing on a shared peer.
    public func stop() {
        guard !isShared else { return }
        terminate()
    }

    private func terminate() {
        guard !stopping.isSet else { return }
        stopping.set()
        let child = self.child
        let errorLog = self.errorLog
        child.onExit { _ in Self.removeLog(errorLog) }
        child.signal(SIGTERM)
        // A timer on a Dispatch queue, not a sleeping thread: nothing waits for the grace period.
        let grace = Self.stopGracePeriod.components
        DispatchQueue.global().asyncAfter(
            deadline: .now() + .seconds(Int(grace.seconds)) + .nanoseconds(Int(grace.attoseconds / 1_000_000_000))
        ) {
            child.signal(SIGKILL)
        }
    }

    /// Stops the peer like ``stop()`` and suspends until its process is gone, so its port is free.
    /// Bounded: SIGKILL follows SIGTERM after ``stopGracePeriod``. Nothing on a shared peer.
    public func stopAndWait() async {
        guard !isShared else { return }
        terminate()
        _ = await child.waitForExit()
    }

    /// Kills the peer at once with SIGKILL, as a crashing server would vanish; does not wait.
    public func killAbruptly() {
        stopping.set()
        child.onExit { [errorLog] _ in Self.removeLog(errorLog) }
        child.signal(SIGKILL)
    }

    /// Suspends until the peer's process has ended and been reaped (after ``killAbruptly()`` or ``stop()``).
    public func waitForExit() async {
        _ = await child.waitForExit()
    }
}

/// The peers ``PythonPeer/shared(_:arguments:)`` hands out, one per script and arguments.
actor SharedPeers {
    static let registry = SharedPeers()
    private var peers: [[String]: Task<PythonPeer, any Error>] = [:]

    func peer(_ script: String, arguments: [String], python: URL) async throws -> PythonPeer {
        let key = [python.path, script] + arguments
        let task =
            peers[key]
            ?? Task {
                try await PythonPeer.start(
                    script, arguments: arguments, port: 0, readyTimeout: 60, isShared: true, python: python)
            }
        peers[key] = task
        do {
            let peer = try await task.value
            if peer.hasExited {
                // It died under us (a crash): the next caller starts a new one.
                if peers[key] == task { peers[key] = nil }
            }
            return peer
        } catch {
            if peers[key] == task { peers[key] = nil }
            throw error
        }
    }
}
