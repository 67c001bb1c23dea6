/// A command of the `tidings` tool: a name, its declared options, and either subcommands or a body.
///
/// A body runs in two steps: `validate` turns the ``ParsedOptions`` into the command's input and throws
/// ``ValidationError`` for anything wrong (exit 64, nothing done yet); only then does `run` do the work.
struct Command: Sendable {
    /// The word that selects the command (`demo`, `sync`).
    let name: String
    /// One line for the parent's SUBCOMMANDS list and the OVERVIEW.
    let abstract: String
    /// The options, each declared once; help, usage and parsing come from them.
    let options: [OptionSpec]
    /// Paragraph lines printed after OPTIONS (exit statuses, JSON keys, guarantees), or none.
    let discussion: [String]
    /// Subcommands, for a command that groups others.
    let subcommands: [Command]
    /// Validates parsed options and returns the work to do; nil for a command that only groups others.
    let prepare: (@Sendable (ParsedOptions) throws -> @Sendable () async throws -> Void)?

    /// A command that only groups subcommands.
    init(name: String, abstract: String, discussion: [String] = [], subcommands: [Command]) {
        self.name = name
        self.abstract = abstract
        self.options = []
        self.discussion = discussion
        self.subcommands = subcommands
        self.prepare = nil
    }

    /// A command with a body: `validate` checks everything the command line can get wrong before `run` starts.
    init<Input: Sendable>(
        name: String,
        abstract: String,
        options: [OptionSpec] = [],
        discussion: [String] = [],
        subcommands: [Command] = [],
        validate: @escaping @Sendable (ParsedOptions) throws -> Input,
        run: @escaping @Sendable (Input) async throws -> Void
    ) {
        self.name = name
        self.abstract = abstract
        self.options = options
        self.discussion = discussion
        self.subcommands = subcommands
        self.prepare = { parsed in
            let input = try validate(parsed)
            return { try await run(input) }
        }
    }

    /// The `--json` option, when this command declares one.
    var jsonOption: OptionSpec? { options.first { $0.name == "--json" } }
}

/// The `--json` flag shared by commands that print machine-readable output.
let jsonOption = OptionSpec.flag(
    "--json", help: "Print one JSON object per line on standard output instead of text (keys below).")
