import Foundation
import PeerSupport
import Testing
import TidingsSandboxKit

/// The HTTP server against Python's aiohttp client (Tests/Peers/http_client_probe.py), run as a child.
@Suite(.timeLimit(.minutes(1))) struct SandboxHTTPPythonInteropTests {
    @Test func aiohttpClientSeesEveryKindOfBodyAndHeaderAsSent() async throws {
        let server = SandboxHTTPServer(router: SandboxTestRoutes.router())
        let listener = try server.serve()
        defer { listener.stop() }
        server.faults.add(.tooManyRequests(retryAfterSeconds: 7), on: .path("/big"), times: 1)
        let script = PythonPeer.projectRoot.appendingPathComponent("Tests/Peers/http_client_probe.py")
        let outcome = try await ChildProcess.run(
            executable: PythonPeer.python.path,
            arguments: ["-u", script.path, "--url", "http://127.0.0.1:\(listener.port)"], timeout: .seconds(45))
        let output = String(decoding: outcome.standardOutput, as: UTF8.self)
        #expect(
            outcome.termination == .exited(0), "\(output) \(String(decoding: outcome.standardError, as: UTF8.self))")
        #expect(output == "OK 13\n")
        #expect(server.log.entries.count == 11)
        #expect(server.log.entries.filter { $0.status == 429 }.count == 1)
    }
}
