import Foundation
import Testing

/// Runs the built `tidings` executable and captures what it prints.
struct ToolRun {
    var status: Int32
    var standardOutput: String
    var standardError: String

    static var executable: URL {
        // The test bundle sits in the build folder next to the executables it was built with.
        var url = Bundle.main.bundleURL
        for _ in 0..<4 {
            let candidate = url.appendingPathComponent("tidings")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            url.deleteLastPathComponent()
        }
        return Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("tidings")
    }

    static func run(_ arguments: [String]) throws -> ToolRun {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return ToolRun(
            status: process.terminationStatus,
            standardOutput: String(decoding: outData, as: UTF8.self),
            standardError: String(decoding: errData, as: UTF8.self))
    }
}

@Suite struct CommandLineTests {
    @Test func helpListsCommandsAndExitsZero() throws {
        let run = try ToolRun.run(["--help"])
        #expect(run.status == 0)
        #expect(run.standardOutput.hasPrefix("OVERVIEW: "))
        #expect(run.standardOutput.contains("SUBCOMMANDS:"))
        #expect(run.standardOutput.contains("demo"))
        #expect(run.standardError.isEmpty)
    }

    @Test func helpSubcommandMatchesDashDashHelp() throws {
        let viaWord = try ToolRun.run(["help", "demo"])
        let viaFlag = try ToolRun.run(["demo", "--help"])
        #expect(viaWord.status == 0)
        #expect(viaWord.standardOutput == viaFlag.standardOutput)
        #expect(viaWord.standardOutput.contains("USAGE: tidings demo"))
    }

    @Test func unknownCommandIsAUsageError() throws {
        let run = try ToolRun.run(["frobnicate"])
        #expect(run.status == 64)
        #expect(run.standardOutput.isEmpty)
        #expect(run.standardError.hasPrefix("Error: Unknown command 'frobnicate'.\nUsage: tidings "))
    }

    @Test func unknownOptionIsAUsageError() throws {
        let run = try ToolRun.run(["demo", "--bogus"])
        #expect(run.status == 64)
        #expect(run.standardError.contains("Error: Unknown option '--bogus'."))
        #expect(run.standardError.contains("See 'tidings demo --help'"))
    }

    @Test func versionPrintsOneLine() throws {
        let run = try ToolRun.run(["--version"])
        #expect(run.status == 0)
        #expect(run.standardOutput.split(separator: "\n").count == 1)
    }
}

@Suite struct CoreDemoTests {
    @Test func coreDemoShowsEncryptionRecoveryAndBackoff() throws {
        let run = try ToolRun.run(["demo", "--only", "core"])
        #expect(run.status == 0)
        #expect(run.standardOutput.contains("plaintext found in the database files: none"))
        #expect(run.standardOutput.contains("refused with StoreError.wrongKey"))
        #expect(run.standardOutput.contains("moved aside to garbage.sqlite.corrupt-"))
        #expect(run.standardOutput.contains("429 with Retry-After: 300s"))
        #expect(run.standardOutput.contains("(mode 600)"))
    }

    @Test func unknownDemoPartIsAUsageError() throws {
        let run = try ToolRun.run(["demo", "--only", "nope"])
        #expect(run.status == 64)
        #expect(run.standardError.contains("Unknown demo part 'nope'."))
    }
}
