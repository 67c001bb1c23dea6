/// One option of a command, declared once: parsing, the USAGE line and the OPTIONS help are all derived from it.
///
/// Names are kebab-case with two dashes (`--store`). A value option takes its value as the next word or after
/// `=` (`--store PATH`, `--store=PATH`); a flag takes none. Resolution order for a value is: the command line,
/// then ``environment`` (when set and not empty), then ``defaultValue``.
struct OptionSpec: Sendable, Hashable {
    /// How an option consumes the command line.
    enum Kind: Sendable, Hashable {
        /// Present or absent, no value (`--json`).
        case flag
        /// At most once, with a value.
        case single
        /// Any number of times, each with a value; the values keep their order.
        case repeating
    }

    /// The option's name with its dashes (`--store`).
    let name: String
    /// What the value is called in USAGE and OPTIONS (`path` prints as `<path>`); empty for a flag.
    let valueName: String
    /// Flag, single value or repeatable.
    let kind: Kind
    /// The value used when neither the command line nor the environment gives one, shown in the help.
    let defaultValue: String?
    /// An environment variable read when the command line does not give the option (never printed with its value).
    let environment: String?
    /// One sentence for OPTIONS; the default, the environment variable and repeatability are added to it.
    let help: String

    /// A flag: present or absent.
    static func flag(_ name: String, help: String) -> OptionSpec {
        OptionSpec(name: name, valueName: "", kind: .flag, defaultValue: nil, environment: nil, help: help)
    }

    /// An option given at most once with a value.
    static func value(
        _ name: String, _ valueName: String, default defaultValue: String? = nil, environment: String? = nil,
        help: String
    ) -> OptionSpec {
        OptionSpec(
            name: name, valueName: valueName, kind: .single, defaultValue: defaultValue, environment: environment,
            help: help)
    }

    /// An option that may be given any number of times, each with a value.
    static func repeating(_ name: String, _ valueName: String, help: String) -> OptionSpec {
        OptionSpec(name: name, valueName: valueName, kind: .repeating, defaultValue: nil, environment: nil, help: help)
    }

    /// `--name <value>`, or just `--name` for a flag: the left column of OPTIONS and the USAGE word.
    var synopsis: String { kind == .flag ? name : "\(name) <\(valueName)>" }
}

/// Options several commands share, declared once so that every command spells, documents and reads them alike
/// (in the spirit of swift-argument-parser's `@OptionGroup`).
struct OptionGroup: Sendable {
    /// The options in the order the help lists them.
    let options: [OptionSpec]

    init(_ options: [OptionSpec]) { self.options = options }

    /// This group's options followed by `more`.
    static func + (group: OptionGroup, more: [OptionSpec]) -> [OptionSpec] { group.options + more }

    /// This group's options followed by another group's.
    static func + (group: OptionGroup, other: OptionGroup) -> [OptionSpec] { group.options + other.options }
}

/// A command line that does not make sense: reported on standard error with the command's usage line and exit
/// code 64 (EX_USAGE), always before the command does any work.
struct ValidationError: Error, Sendable, Equatable {
    /// What was wrong, in one sentence that never repeats a secret value.
    let message: String

    init(_ message: String) { self.message = message }
}
