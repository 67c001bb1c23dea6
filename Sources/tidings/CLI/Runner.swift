#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Exit codes of the tool, as sysexits(3) defines them.
enum ExitCode {
    static let success: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 64
    /// EX_DATAERR: the input data (a cache file) is damaged or not what it should be.
    static let dataError: Int32 = 65
    /// EX_NOINPUT: an input file does not exist or cannot be read.
    static let noInput: Int32 = 66
    /// EX_UNAVAILABLE: a service (the server) cannot be reached.
    static let unavailable: Int32 = 69
    /// EX_SOFTWARE: an internal error.
    static let software: Int32 = 70
    /// EX_IOERR: reading or writing a local file failed.
    static let ioError: Int32 = 74
    /// EX_TEMPFAIL: a temporary failure (a timeout, a busy file); trying again later may work.
    static let temporaryFailure: Int32 = 75
    /// EX_PROTOCOL: the server answered with an error or something the protocol does not allow.
    static let protocolError: Int32 = 76
    /// EX_NOPERM: a credential (a token, a key) was refused.
    static let noPermission: Int32 = 77
}

/// A failure the tool reports with its own exit code: each line goes to standard error as `Error: <line>`.
struct ToolFailure: Error, Sendable {
    /// The exit code, from ``ExitCode``.
    let code: Int32
    /// One line per failure, in the order they happened.
    let lines: [String]

    init(_ code: Int32, _ lines: [String]) {
        self.code = code
        self.lines = lines
    }

    init(_ code: Int32, _ line: String) { self.init(code, [line]) }
}

/// Finds the command a command line names, runs it and maps the outcome to an exit code.
struct Runner {
    let root: Command

    /// Runs `words` (without the program name) and returns the process exit code.
    func run(_ words: [String]) async -> Int32 {
        var path: [String] = []
        var command = root
        var arguments = Arguments(words)
        do {
            while let word = arguments.words.first, let next = command.subcommands.first(where: { $0.name == word }) {
                _ = arguments.popPositional()
                path.append(word)
                command = next
            }
            if arguments.flag("-h", "--help") { return printHelp(command, path: path) }
            if !command.subcommands.isEmpty, arguments.words.first == "help" {
                _ = arguments.popPositional()
                return try help(for: &arguments, from: command, path: path)
            }
            if let body = command.run, command.subcommands.isEmpty || arguments.words.first.map(isOption) ?? true {
                try await body(&arguments)
                return ExitCode.success
            }
            guard let word = arguments.words.first else { return printHelp(command, path: path) }
            if isOption(word) { throw UsageError(message: "Unknown option '\(word)'.") }
            throw UsageError(message: "Unknown command '\(word)'.")
        } catch let error as UsageError {
            let prefix = (["tidings"] + path).joined(separator: " ")
            writeStandardError(
                "Error: \(error.message)\nUsage: tidings \(command.usage)\n"
                    + "  See '\(prefix) --help' for more information.\n")
            return ExitCode.usage
        } catch let failure as ToolFailure {
            writeStandardError(failure.lines.map { "Error: \($0)\n" }.joined())
            return failure.code
        } catch {
            writeStandardError("Error: \(error)\n")
            return ExitCode.failure
        }
    }

    private func isOption(_ word: String) -> Bool { word.hasPrefix("-") }

    private func help(for arguments: inout Arguments, from command: Command, path: [String]) throws -> Int32 {
        var command = command
        var path = path
        while let word = arguments.popPositional() {
            guard let next = command.subcommands.first(where: { $0.name == word }) else {
                throw UsageError(message: "Unknown command '\(word)'.")
            }
            command = next
            path.append(word)
        }
        try arguments.finish()
        return printHelp(command, path: path)
    }

    private func printHelp(_ command: Command, path: [String]) -> Int32 {
        print(command.help(path: path), terminator: "")
        return ExitCode.success
    }
}

/// Writes `text` to standard error, unbuffered.
func writeStandardError(_ text: String) {
    var bytes = Array(text.utf8)
    _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
}
