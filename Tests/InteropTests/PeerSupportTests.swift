import Foundation
import PeerSupport
import Testing
import TidingsNet

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The harness that starts peers and child processes: clear errors, bounded waits, no stray processes.
@Suite(.timeLimit(.minutes(2))) struct PeerSupportTests {
    @Test func aMissingPeerScriptIsAClearError() async {
        await #expect(throws: PythonPeer.StartError.self) {
            _ = try await PythonPeer.start("no-such-peer.py")
        }
    }

    @Test func aPeerThatExitsBeforeReadyIsAClearErrorWithItsStandardError() async {
        // http_peer.py rejects an unknown option through argparse, on standard error, before READY.
        await #expect {
            _ = try await PythonPeer.start("http_peer.py", arguments: ["--no-such-option"])
        } throws: { error in
            let description = (error as? PythonPeer.StartError)?.description ?? ""
            return description.contains("did not become ready") && description.contains("--no-such-option")
        }
    }

    @Test func stopAndWaitReapsThePeerAndFreesItsPort() async throws {
        let peer = try await PythonPeer.start("http_peer.py")
        #expect(!peer.hasExited)
        await peer.stopAndWait()
        #expect(peer.hasExited)
        // Reaped, not a zombie: the pid is no longer ours to signal.
        #expect(kill(peer.pid, 0) == -1 && errno == ESRCH)
        // The port is free again: it can be bound at once. (Bound here, microseconds after the reap: a second
        // Python peer took long enough to start that a parallel test's ephemeral port sometimes took it first.)
        let listener = try TCPListener.bind(port: peer.port)
        #expect(listener.port == peer.port)
        listener.close()
    }

    @Test func killAbruptlyEndsThePeerBySIGKILL() async throws {
        let peer = try await PythonPeer.start("ws_peer.py")
        peer.killAbruptly()
        await peer.waitForExit()
        #expect(peer.hasExited)
        peer.stop()  // after a kill, a no-op
    }

    @Test func aSharedPeerIsStartedOnceAndOutlivesStop() async throws {
        async let first = PythonPeer.shared("ws_peer.py")
        async let second = PythonPeer.shared("ws_peer.py")
        let (a, b) = try await (first, second)
        #expect(a.pid == b.pid)
        #expect(a.isShared)
        a.stop()
        let third = try await PythonPeer.shared("ws_peer.py")
        #expect(third.pid == a.pid)
        #expect(!third.hasExited)
    }

    @Test func aPeerExitsWhenTheTestProcessGoesAway() async throws {
        // The lifeline: closing our end of its standard input is what the end of this process does.
        let python = PythonPeer.python.path
        let script = PythonPeer.projectRoot.appendingPathComponent("Tests/Peers/http_peer.py").path
        var environment = ProcessInfo.processInfo.environment
        environment["TIDINGS_PEER_LIFELINE"] = "stdin"
        let child = try ChildProcess.spawn(
            executable: python, arguments: ["-u", script, "--port", "0"], environment: environment,
            standardInput: .pipe, standardOutput: .pipe, standardError: .nullDevice)
        let ready = try await child.readOutput(timeout: .seconds(60)) { PythonPeerOutput.hasReadyLine($0) }
        #expect(ready.complete, "no READY line: \(String(decoding: ready.data, as: UTF8.self))")
        child.closeStandardInput()
        let ended = await child.waitForExit(timeout: .seconds(60))
        if ended == nil { child.signal(SIGKILL) }
        #expect(ended == .exited(0))
    }

    @Test func runCollectsBothStreamsAndTheExitStatus() async throws {
        let outcome = try await ChildProcess.run(
            executable: "/bin/sh", arguments: ["-c", "echo out; echo err >&2; exit 3"], timeout: .seconds(60))
        #expect(outcome.termination == .exited(3))
        #expect(String(decoding: outcome.standardOutput, as: UTF8.self) == "out\n")
        #expect(String(decoding: outcome.standardError, as: UTF8.self) == "err\n")
    }

    @Test func runKillsAChildThatOutlivesItsDeadline() async throws {
        await #expect(throws: ChildProcess.Failure.self) {
            _ = try await ChildProcess.run(executable: "/bin/sleep", arguments: ["600"], timeout: .seconds(1))
        }
    }

    @Test func aMissingExecutableIsAClearError() async {
        #expect(throws: ChildProcess.Failure.self) {
            _ = try ChildProcess.spawn(executable: "/nonexistent/tool", arguments: [])
        }
    }
}

/// Recognizes the line a peer prints once it listens.
enum PythonPeerOutput {
    static func hasReadyLine(_ output: Data) -> Bool {
        String(decoding: output, as: UTF8.self).split(separator: "\n").contains { $0.hasPrefix("READY ") }
    }
}
