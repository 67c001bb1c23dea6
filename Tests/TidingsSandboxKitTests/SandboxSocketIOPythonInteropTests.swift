import Foundation
import PeerSupport
import Testing
import TidingsSandboxKit

/// The Socket.IO server against python-socketio's AsyncClient (Tests/Peers/sio_client_probe.py), run as a child.
@Suite(.timeLimit(.minutes(1))) struct SandboxSocketIOPythonInteropTests {
    @Test(arguments: ["polling", "websocket", "upgrade"])
    func pythonClientConnectsEmitsAndAnswersAcks(_ transport: String) async throws {
        let server = SandboxSocketIOTests.makeServer()
        let listener = try server.serve()
        defer { listener.stop() }
        let script = PythonPeer.projectRoot.appendingPathComponent("Tests/Peers/sio_client_probe.py")
        let outcome = try await ChildProcess.run(
            executable: PythonPeer.python.path,
            arguments: ["-u", script.path, "--url", "http://127.0.0.1:\(listener.port)", "--transport", transport],
            timeout: .seconds(45))
        let output = String(decoding: outcome.standardOutput, as: UTF8.self)
        #expect(
            outcome.termination == .exited(0), "\(output) \(String(decoding: outcome.standardError, as: UTF8.self))")
        #expect(output == "OK 4\n")
        #expect(server.log.entries.filter { $0.method == "EVENT" }.map(\.path) == ["/ echo", "/ binary", "/chat ask"])
    }
}
