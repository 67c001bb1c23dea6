import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real server from PyPI (python-socketio, websockets, aiohttp), started on a free loopback
/// port for one test and stopped by process id.
///
/// Peers are scripts in `Tests/Peers/`, run with the project's `.venv/bin/python` (which
/// `scripts/test` installs). A script takes `--port 0` (and any extra arguments), binds
/// 127.0.0.1, and prints `READY <port>` on a line of its own once it accepts connections.
/// A missing virtualenv is an error, never a skip.
public final class PythonPeer: @unchecked Sendable {
    /// The loopback port the peer listens on.
    public let port: Int
    /// The peer's process id.
    public let pid: Int32
    private let process: Process
    private let errorLog: URL
    private let lock = NSLock()
    private var stopped = false

    /// Why a peer could not be started.
    public struct StartError: Error, CustomStringConvertible {
        public let description: String
    }

    private init(port: Int, process: Process, errorLog: URL) {
        self.port = port
        self.pid = process.processIdentifier
        self.process = process
        self.errorLog = errorLog
    }

    deinit { stop() }

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

    /// Starts `Tests/Peers/<script>` and waits until it prints `READY <port>`.
    ///
    /// - Parameters:
    ///   - script: the file name inside `Tests/Peers/`.
    ///   - arguments: extra arguments after `--port <port>`.
    ///   - port: the port to ask for; 0 lets the peer pick a free one.
    ///   - readyTimeout: how long the peer may take to start.
    /// - Throws: ``StartError`` when the virtualenv or script is missing, or the peer exits or
    ///   stays silent; its standard error is included.
    ///
    /// The wait runs on a thread of its own, so that starting peers never blocks the few threads that
    /// run every test's tasks (a blocked pool stalls unrelated tests into their timeouts).
    public static func start(
        _ script: String,
        arguments: [String] = [],
        port: Int = 0,
        readyTimeout: TimeInterval = 60
    ) async throws -> PythonPeer {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(
                    with: Result {
                        try startBlocking(script, arguments: arguments, port: port, readyTimeout: readyTimeout)
                    })
            }
        }
    }

    private static func startBlocking(
        _ script: String,
        arguments: [String],
        port: Int,
        readyTimeout: TimeInterval
    ) throws -> PythonPeer {
        let python = Self.python
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw StartError(
                description: "No Python virtualenv at \(python.path): run scripts/test, which installs it.")
        }
        let scriptURL = projectRoot.appendingPathComponent("Tests/Peers/\(script)")
        guard FileManager.default.fileExists(atPath: scriptURL.path) else {
            throw StartError(description: "No peer script at \(scriptURL.path).")
        }
        let errorLog = FileManager.default.temporaryDirectory
            .appendingPathComponent("tidings-peer-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: errorLog.path, contents: nil)
        let process = Process()
        process.executableURL = python
        process.arguments = ["-u", scriptURL.path, "--port", String(port)] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONUNBUFFERED"] = "1"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: errorLog)
        try process.run()

        let ready = ReadyLine()
        let reader = output.fileHandleForReading
        Thread.detachNewThread {
            var buffer = Data()
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: 0x0A) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    buffer.removeSubrange(buffer.startIndex...newline)
                    if line.hasPrefix("READY "), let port = Int(line.dropFirst(6).trimmingCharacters(in: .whitespaces))
                    {
                        ready.set(port)
                    }
                }
            }
            ready.set(nil)
        }
        guard let boundPort = ready.wait(timeout: readyTimeout) else {
            let peer = PythonPeer(port: 0, process: process, errorLog: errorLog)
            peer.stop()
            let log = (try? String(contentsOf: errorLog, encoding: .utf8)) ?? ""
            throw StartError(description: "Peer \(script) did not become ready:\n\(log.suffix(4000))")
        }
        return PythonPeer(port: boundPort, process: process, errorLog: errorLog)
    }

    /// What the peer wrote to standard error so far.
    public var standardError: String { (try? String(contentsOf: errorLog, encoding: .utf8)) ?? "" }

    /// Stops the peer: SIGTERM, then SIGKILL if it is still there after two seconds. Idempotent.
    public func stop() {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        stopped = true
        guard process.isRunning else { return }
        kill(pid, SIGTERM)
        let deadline = Date().addingTimeInterval(2)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(pid, SIGKILL) }
        process.waitUntilExit()
        // TIDINGS_KEEP_PEER_LOGS=1 keeps each peer's standard error in the temporary folder for debugging.
        if ProcessInfo.processInfo.environment["TIDINGS_KEEP_PEER_LOGS"] == nil {
            try? FileManager.default.removeItem(at: errorLog)
        }
    }

    /// Kills the peer at once with SIGKILL, as a crashing server would vanish.
    public func killAbruptly() {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        stopped = true
        if process.isRunning { kill(pid, SIGKILL) }
        process.waitUntilExit()
    }
}

/// A one-shot slot for the port a peer announces, waited on with a timeout.
private final class ReadyLine: @unchecked Sendable {
    private let condition = NSCondition()
    private var done = false
    private var port: Int?

    func set(_ value: Int?) {
        condition.lock()
        defer { condition.unlock() }
        guard !done else { return }
        done = true
        port = value
        condition.broadcast()
    }

    func wait(timeout: TimeInterval) -> Int? {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(timeout)
        while !done {
            if !condition.wait(until: deadline) { break }
        }
        return port
    }
}
