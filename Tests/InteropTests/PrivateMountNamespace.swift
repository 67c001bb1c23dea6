import Foundation
import PeerSupport
import Testing

/// Runs one test of this test binary again in a child process inside a private mount namespace
/// (`unshare --mount --propagation private`), where some system files show extra lines: the CA bundle
/// that libcurl reads from a fixed path, or `/etc/hosts` with public host names on loopback.
///
/// URLSession on Linux offers no switch for either, and the machine's files must never change: a
/// bind mount in a private namespace is seen by the child alone and vanishes with it. That needs root
/// (or CAP_SYS_ADMIN), as the test machines run; without it the child exits 97 and the test fails — it
/// never skips.
enum PrivateMountNamespace {
    /// Set in the child; its value is the test the child runs.
    static let variable = "TIDINGS_TEST_IN_MOUNT_NAMESPACE"

    /// A system file as the child sees it: the machine's contents (if any) followed by `appended`.
    struct Overlay: Sendable {
        /// The file's path on the machine, covered in the child.
        var path: String
        /// What the child's copy adds at the end.
        var appended: Data
    }

    /// Whether this process is the child started by ``run(test:overlays:timeout:sourceLocation:)`` for `test`.
    static func isInside(running test: String) -> Bool {
        ProcessInfo.processInfo.environment[variable] == test
    }

    /// Runs `test` (`Suite/name()`, as `--filter` takes it) in a child of this test binary whose mount
    /// namespace shows `overlays`, and records an issue unless that child ran exactly this one test and it
    /// passed.
    static func run(
        test: String, overlays: [Overlay], timeout: Duration = .seconds(90),
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tidings-namespace-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var mounts: [String] = []
        for (index, overlay) in overlays.enumerated() {
            var contents = (try? Data(contentsOf: URL(fileURLWithPath: overlay.path))) ?? Data()
            contents.append(Data("\n".utf8))
            contents.append(overlay.appended)
            let copy = folder.appendingPathComponent("\(index)-\(URL(fileURLWithPath: overlay.path).lastPathComponent)")
            try contents.write(to: copy)
            mounts += [copy.path, overlay.path]
        }

        let binary = try #require(
            Bundle.main.executablePath ?? CommandLine.arguments.first, sourceLocation: sourceLocation)
        // Arguments: pairs of (copy, system path), then `--`, then the command to exec.
        let script =
            "while [ \"$1\" != -- ]; do mount --bind \"$1\" \"$2\" || exit 97; shift 2; done; shift; exec \"$@\""
        let command = [
            "/usr/bin/env", "\(variable)=\(test)", binary, "--testing-library", "swift-testing", "--filter", test,
        ]
        let outcome = try await ChildProcess.run(
            executable: "/usr/bin/unshare",
            arguments: ["--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh"] + mounts + ["--"]
                + command,
            timeout: timeout)
        let output =
            String(decoding: outcome.standardOutput, as: UTF8.self)
            + String(decoding: outcome.standardError, as: UTF8.self)
        // Exit 97: a bind mount failed (no root or CAP_SYS_ADMIN, or a path that does not exist).
        #expect(
            outcome.termination == .exited(0), "the child in the mount namespace failed:\n\(output)",
            sourceLocation: sourceLocation)
        // Exactly this one test ran and passed (a filter that matched nothing would also exit 0).
        #expect(
            output.contains(/Test run with 1 test (in 1 suite )?passed/), "\(output)", sourceLocation: sourceLocation)
    }
}
