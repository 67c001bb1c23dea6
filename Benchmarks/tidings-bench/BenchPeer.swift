import Foundation
import PeerSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A benchmark that could not run as planned (a peer that did not start, a reply that did not match).
struct BenchError: Error, CustomStringConvertible {
    let description: String
}

/// The folder holding Package.swift and Tests/Peers: found from this source file's path, else from the
/// working directory (the bench runs from the project root or below it).
func benchProjectRoot() -> URL {
    let starts = [
        URL(fileURLWithPath: #filePath).deletingLastPathComponent(),
        URL(fileURLWithPath: FileManager.default.currentDirectoryPath),
    ]
    for start in starts {
        var url = start
        while url.path != "/" {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path),
                FileManager.default.fileExists(atPath: url.appendingPathComponent("Tests/Peers").path)
            {
                return url
            }
            url.deleteLastPathComponent()
        }
    }
    return URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
}

/// Exits with EX_UNAVAILABLE (69) and one line saying what to run when the Python peers are not installed,
/// instead of failing later on a missing file.
func requirePythonPeers(root: URL) {
    let python = root.appendingPathComponent(".venv/bin/python")
    guard !FileManager.default.isExecutableFile(atPath: python.path) else { return }
    FileHandle.standardError.write(
        Data("tidings-bench: the Python peers are not installed (no \(python.path)); run scripts/install-peers\n".utf8))
    exit(69)
}

/// Runs a Python baseline client from Tests/Peers and decodes the JSON line it prints first.
///
/// The script may linger after printing (python-socketio's polling disconnect waits for the long
/// poll), so it is stopped once its line is read. It is spawned and reaped off Swift's cooperative pool
/// (PeerSupport's ``ChildProcess``); a baseline that prints nothing for `timeout` fails the run.
func runPythonBaseline<Figures: Decodable>(
    _ type: Figures.Type, root: URL, script: String, arguments: [String], timeout: Duration = .seconds(600)
) async throws -> Figures {
    let client = try ChildProcess.spawn(
        executable: root.appendingPathComponent(".venv/bin/python").path,
        arguments: [root.appendingPathComponent("Tests/Peers/\(script)").path] + arguments,
        standardOutput: .pipe, standardError: .nullDevice)
    let output = try await client.readOutput(timeout: timeout) { $0.contains(0x0A) }
    client.signal(SIGTERM)
    let ended = await client.waitForExit(timeout: .seconds(10))
    if ended == nil {
        client.signal(SIGKILL)
        _ = await client.waitForExit()
    }
    guard output.complete, let line = output.data.split(separator: 0x0A).first else {
        throw BenchError(
            description: "the Python baseline \(script) printed no result (\(ended.map { "\($0)" } ?? "killed"))")
    }
    return try JSONDecoder().decode(Figures.self, from: Data(line))
}

/// A Python server process for a benchmark: a ``PythonPeer`` (spawned and reaped off the pool).
struct BenchPeer {
    let port: Int
    private let peer: PythonPeer
    /// The server's process ID (for benchmarks that read what the server spent).
    var pid: Int32 { peer.pid }

    /// Starts `Tests/Peers/<script> --port 0 <arguments>` and waits for its `READY <port>` line.
    static func start(root: URL, script: String, arguments: [String] = []) async throws -> BenchPeer {
        do {
            let peer = try await PythonPeer.start(script, arguments: arguments)
            return BenchPeer(port: peer.port, peer: peer)
        } catch let error as PythonPeer.StartError {
            throw BenchError(description: error.description)
        }
    }

    /// Stops the server without waiting: SIGTERM now (the peers exit at once on it), SIGKILL after two
    /// seconds; it is reaped off the pool.
    func stop() {
        peer.stop()
    }
}
