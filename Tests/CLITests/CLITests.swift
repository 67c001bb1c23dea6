import Foundation
import PeerSupport
import Testing

/// Runs the built `tidings` executable and captures what it prints.
///
/// The child is spawned and reaped off Swift's cooperative pool (PeerSupport's ``ChildProcess``): a test
/// awaits it, never blocks a pool thread on `waitUntilExit` or a pipe read.
struct ToolRun {
    var status: Int32
    var standardOutput: String
    var standardError: String

    static var executable: URL { builtExecutable(named: "tidings") }

    /// Runs the tool to its end; a run that takes more than `timeout` is killed and fails the test.
    static func run(_ arguments: [String], timeout: Duration = .seconds(45)) async throws -> ToolRun {
        let outcome = try await ChildProcess.run(executable: executable.path, arguments: arguments, timeout: timeout)
        let status: Int32 =
            switch outcome.termination {
            case .exited(let status): status
            case .signalled(let signal): 128 + signal
            }
        return ToolRun(
            status: status,
            standardOutput: String(decoding: outcome.standardOutput, as: UTF8.self),
            standardError: String(decoding: outcome.standardError, as: UTF8.self))
    }
}

@Suite(.timeLimit(.minutes(1))) struct CommandLineTests {
    @Test func helpListsCommandsAndExitsZero() async throws {
        let run = try await ToolRun.run(["--help"])
        #expect(run.status == 0)
        #expect(run.standardOutput.hasPrefix("OVERVIEW: "))
        #expect(run.standardOutput.contains("SUBCOMMANDS:"))
        #expect(run.standardOutput.contains("demo"))
        #expect(run.standardError.isEmpty)
    }

    @Test func helpSubcommandMatchesDashDashHelp() async throws {
        let viaWord = try await ToolRun.run(["help", "demo"])
        let viaFlag = try await ToolRun.run(["demo", "--help"])
        #expect(viaWord.status == 0)
        #expect(viaWord.standardOutput == viaFlag.standardOutput)
        #expect(viaWord.standardOutput.contains("USAGE: tidings demo"))
    }

    @Test func unknownCommandIsAUsageError() async throws {
        let run = try await ToolRun.run(["frobnicate"])
        #expect(run.status == 64)
        #expect(run.standardOutput.isEmpty)
        #expect(run.standardError.hasPrefix("Error: Unknown command 'frobnicate'.\nUsage: tidings "))
    }

    @Test func unknownOptionIsAUsageError() async throws {
        let run = try await ToolRun.run(["demo", "--bogus"])
        #expect(run.status == 64)
        #expect(run.standardError.contains("Error: Unknown option '--bogus'."))
        #expect(run.standardError.contains("See 'tidings demo --help'"))
    }

    @Test func versionPrintsOneLine() async throws {
        let run = try await ToolRun.run(["--version"])
        #expect(run.status == 0)
        #expect(run.standardOutput.split(separator: "\n").count == 1)
    }
}

@Suite(.timeLimit(.minutes(1))) struct CoreDemoTests {
    @Test func coreDemoShowsEncryptionRecoveryAndBackoff() async throws {
        let run = try await ToolRun.run(["demo", "--only", "core"])
        #expect(run.status == 0)
        #expect(run.standardOutput.contains("plaintext found in the database files: none"))
        #expect(run.standardOutput.contains("refused with StoreError.wrongKey"))
        #expect(run.standardOutput.contains("moved aside to garbage.sqlite.corrupt-"))
        #expect(run.standardOutput.contains("429 with Retry-After: 300s"))
        #expect(run.standardOutput.contains("(mode 600)"))
    }

    @Test func unknownDemoPartIsAUsageError() async throws {
        let run = try await ToolRun.run(["demo", "--only", "nope"])
        #expect(run.status == 64)
        #expect(run.standardError.contains("Unknown demo part 'nope'."))
    }
}
