import Foundation
import PeerSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `tidings sandbox openmates` started as the real executable, with what it printed before serving: the
/// WebSocket URL, the token and the prefetch endpoint, read the way an app's developer reads them.
struct SandboxOpenMatesLaunch {
    let child: ChildProcess
    /// Everything printed up to the `connect:` line.
    let output: String
    /// The WebSocket endpoint's origin (the `url:` line without `/v1/ws…`).
    let origin: URL
    /// The session token (the `token:` line).
    let token: String
    /// The prefetch endpoint's origin (the `prefetch: POST …` line without `/v1/…`).
    let prefetchOrigin: URL

    /// Starts the sandbox (with `extraArguments`, e.g. `--cold-for 1`) and reads its banner (30 s at most); the caller stops it with ``stop()``, and a
    /// `defer { launch.child.signal(SIGKILL) }` ends it whatever happens.
    static func start(_ extraArguments: [String] = []) async throws -> SandboxOpenMatesLaunch {
        let child = try ChildProcess.spawn(
            executable: ToolRun.executable.path, arguments: ["sandbox", "openmates"] + extraArguments,
            standardError: .nullDevice)
        do {
            let (printed, complete) = try await child.readOutput(timeout: .seconds(30)) { data in
                String(decoding: data, as: UTF8.self).contains("\nconnect: ")
            }
            #expect(complete)
            let output = String(decoding: printed, as: UTF8.self)
            let lines = output.split(separator: "\n")
            let url = try #require(lines.first { $0.hasPrefix("url: ") }).dropFirst(5)
            let origin = try #require(URL(string: String(url).components(separatedBy: "/v1/ws")[0]))
            let token = try #require(lines.first { $0.hasPrefix("token: ") }?.dropFirst(7).split(separator: " ").first)
            let prefetch = try #require(lines.first { $0.hasPrefix("prefetch: POST ") })
            let prefetchURL = try #require(prefetch.dropFirst("prefetch: POST ".count).split(separator: " ").first)
            let prefetchOrigin = try #require(URL(string: String(prefetchURL).components(separatedBy: "/v1/")[0]))
            return SandboxOpenMatesLaunch(
                child: child, output: output, origin: origin, token: String(token), prefetchOrigin: prefetchOrigin)
        } catch {
            child.signal(SIGKILL)
            throw error
        }
    }

    /// Sends SIGINT and returns what it printed after the banner; the caller then checks its exit.
    func stop() async throws -> String {
        child.signal(SIGINT)
        return String(decoding: try await child.readOutput(timeout: .seconds(20)) { _ in false }.data, as: UTF8.self)
    }
}
