import Foundation

/// Finds the command a command line names, parses and validates its options, runs it and maps the outcome to
/// a sysexits code.
struct Runner: Sendable {
    /// The outcome of an in-process run: what the binary would exit with and print.
    struct Captured: Sendable {
        let status: Int32
        let standardOutput: String
        let standardError: String
    }

    let root: Command
    /// The environment options fall back to (the process's own for the binary; a test's for in-process runs).
    let environment: [String: String]

    init(root: Command, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.root = root
        self.environment = environment
    }

    /// Runs `words` (without the program name) with output captured instead of written to the process's
    /// descriptors.
    func capture(_ words: [String]) async -> Captured {
        await capture(words, standardInput: []).captured
    }

    /// Runs `words` with `standardInput` as what the command reads on standard input; also returns standard
    /// output as bytes (for commands whose output need not be text).
    func capture(_ words: [String], standardInput: [UInt8]) async -> (captured: Captured, outputBytes: [UInt8]) {
        let console = Console(capturing: true, input: standardInput)
        let status = await Console.$current.withValue(console) { await run(words) }
        let captured = Captured(
            status: status, standardOutput: console.capturedOutput, standardError: console.capturedError)
        return (captured, console.capturedOutputBytes)
    }

    /// Runs `words` (without the program name) and returns the process exit code.
    func run(_ words: [String]) async -> Int32 {
        var path: [String] = []
        var command = root
        var words = words
        while let word = words.first, let next = command.subcommands.first(where: { $0.name == word }) {
            words.removeFirst()
            path.append(word)
            command = next
        }
        let json = command.jsonOption != nil && words.contains("--json")
        do {
            if words.contains("-h") || words.contains("--help") { return printHelp(command, path: path) }
            if !command.subcommands.isEmpty, words.first == "help" {
                return try help(for: Array(words.dropFirst()), from: command, path: path)
            }
            if !command.subcommands.isEmpty, words.isEmpty { return printHelp(command, path: path) }
            if let prepare = command.prepare, command.subcommands.isEmpty || words.first?.hasPrefix("-") == true {
                let work = try prepare(try ParsedOptions(words, specs: command.options, environment: environment))
                try await work()
                return ExitCode.success
            }
            guard let word = words.first else { return printHelp(command, path: path) }
            if word.hasPrefix("-") { throw ValidationError("Unknown option '\(word)'.") }
            throw ValidationError("Unknown command '\(word)'.")
        } catch let error as ValidationError {
            let prefix = (["tidings"] + path).joined(separator: " ")
            writeStandardError(
                "Error: \(error.message)\nUsage: \(HelpText.usage(command, path: path))\n"
                    + "  See '\(prefix) --help' for more information.\n")
            if json { JSONLines.error(code: ExitCode.usage, message: error.message) }
            return ExitCode.usage
        } catch let failure as ToolFailure {
            writeStandardError(failure.lines.map { "Error: \($0)\n" }.joined())
            if json {
                for problem in failure.problems {
                    JSONLines.error(code: problem.code, message: problem.message, conversation: problem.conversation)
                }
            }
            return failure.code
        } catch {
            writeStandardError("Error: \(error)\n")
            if json { JSONLines.error(code: ExitCode.software, message: "\(error)") }
            return ExitCode.software
        }
    }

    private func help(for words: [String], from command: Command, path: [String]) throws -> Int32 {
        var command = command
        var path = path
        for word in words {
            guard let next = command.subcommands.first(where: { $0.name == word }) else {
                if word.hasPrefix("-") { throw ValidationError("Unknown option '\(word)'.") }
                throw ValidationError("Unknown command '\(word)'.")
            }
            command = next
            path.append(word)
        }
        return printHelp(command, path: path)
    }

    private func printHelp(_ command: Command, path: [String]) -> Int32 {
        print(HelpText.help(command, path: path), terminator: "")
        return ExitCode.success
    }
}
