import Foundation

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

/// Runs a Python baseline client from Tests/Peers and decodes the JSON line it prints first.
///
/// The script may linger after printing (python-socketio's polling disconnect waits for the long
/// poll), so it is stopped once its line is read.
func runPythonBaseline<Figures: Decodable>(
    _ type: Figures.Type, root: URL, script: String, arguments: [String]
) throws -> Figures {
    let process = Process()
    process.executableURL = root.appendingPathComponent(".venv/bin/python")
    process.arguments = [root.appendingPathComponent("Tests/Peers/\(script)").path] + arguments
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    var data = Data()
    while !data.contains(0x0A) {
        let chunk = output.fileHandleForReading.availableData
        if chunk.isEmpty { break }
        data.append(chunk)
    }
    if process.isRunning { kill(process.processIdentifier, SIGTERM) }
    process.waitUntilExit()
    guard let line = data.split(separator: 0x0A).first else {
        throw BenchError(description: "the Python baseline \(script) failed (\(process.terminationStatus))")
    }
    return try JSONDecoder().decode(Figures.self, from: Data(line))
}

/// A Python server process for a benchmark, stopped by its process id.
final class BenchPeer {
    let port: Int
    private let process: Process

    private init(port: Int, process: Process) {
        self.port = port
        self.process = process
    }

    /// Starts `Tests/Peers/<script> --port 0 <arguments>` and waits for its `READY <port>` line.
    static func start(root: URL, script: String, arguments: [String] = []) throws -> BenchPeer {
        let process = Process()
        process.executableURL = root.appendingPathComponent(".venv/bin/python")
        process.arguments =
            ["-u", root.appendingPathComponent("Tests/Peers/\(script)").path, "--port", "0"] + arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        var buffer = Data()
        while true {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty {
                throw BenchError(description: "\(script) exited before READY")
            }
            buffer.append(chunk)
            let text = String(decoding: buffer, as: UTF8.self)
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("READY ") }),
                let port = Int(line.dropFirst(6).trimmingCharacters(in: .whitespaces))
            {
                return BenchPeer(port: port, process: process)
            }
        }
    }

    /// Stops the server: SIGTERM, then SIGKILL after two seconds.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(2)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
