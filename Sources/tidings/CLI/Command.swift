import Foundation

/// A command of the `tidings` tool: a name, its help, and either subcommands or a body.
///
/// Bodies receive the arguments that follow the command's name and throw ``UsageError``
/// for anything they do not understand, which the tool reports on standard error with exit
/// code 64 (EX_USAGE).
struct Command: Sendable {
    /// The word that selects the command (`demo`, `sync`).
    let name: String
    /// One line for the parent's SUBCOMMANDS list.
    let abstract: String
    /// The USAGE line, without the leading `tidings`.
    let usage: String
    /// The OPTIONS section, one entry per line (`--store <path>   Where the store lives.`).
    let options: [String]
    /// Paragraph lines printed after OPTIONS (exit statuses, guarantees), or none.
    let discussion: [String]
    /// Subcommands, for a command that only groups others.
    let subcommands: [Command]
    /// The body, for a command that does something.
    let run: (@Sendable (inout Arguments) async throws -> Void)?

    init(
        name: String,
        abstract: String,
        usage: String,
        options: [String] = [],
        discussion: [String] = [],
        subcommands: [Command] = [],
        run: (@Sendable (inout Arguments) async throws -> Void)? = nil
    ) {
        self.name = name
        self.abstract = abstract
        self.usage = usage
        self.options = options
        self.discussion = discussion
        self.subcommands = subcommands
        self.run = run
    }

    /// The help text printed by `--help`, `-h` and `help <command>`.
    func help(path: [String]) -> String {
        var lines = ["OVERVIEW: \(abstract)", "", "USAGE: tidings \(usage)"]
        var options = self.options
        options.append("-h, --help              Show help information.")
        lines += ["", "OPTIONS:"] + options.map { "  \($0)" }
        if !discussion.isEmpty { lines += [""] + discussion }
        if !subcommands.isEmpty {
            let width = (subcommands.map(\.name.count).max() ?? 0) + 4
            lines += ["", "SUBCOMMANDS:"]
            for sub in subcommands {
                lines.append("  " + sub.name.padding(toLength: width, withPad: " ", startingAt: 0) + sub.abstract)
            }
            let prefix = (["tidings"] + path).joined(separator: " ")
            lines += ["", "  See '\(prefix) help <subcommand>' for detailed help."]
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// A mistake in how the tool was called; reported with the usage line and exit code 64.
struct UsageError: Error, Sendable {
    /// What was wrong, in one sentence.
    let message: String
}
