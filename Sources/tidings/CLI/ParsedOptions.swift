/// The options of one command line, checked against the command's ``OptionSpec``s, with typed access.
///
/// Parsing fails with a ``ValidationError`` for an unknown option, a missing value, a flag given a value, an
/// option that is not repeatable given twice, or a word that is not an option: a typo never silently changes
/// what the tool does.
struct ParsedOptions: Sendable {
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []
    private let environment: [String: String]

    /// Parses `words` (what follows the command's name) against `specs`; `environment` backs the options
    /// that declare an environment variable.
    init(_ words: [String], specs: [OptionSpec], environment: [String: String]) throws {
        self.environment = environment
        var index = 0
        while index < words.count {
            let word = words[index]
            index += 1
            guard Self.looksLikeOption(word) else { throw ValidationError("Unexpected argument '\(word)'.") }
            let name: String
            var inline: String?
            if let equals = word.firstIndex(of: "=") {
                name = String(word[..<equals])
                inline = String(word[word.index(after: equals)...])
            } else {
                name = word
            }
            guard let spec = specs.first(where: { $0.name == name }) else {
                throw ValidationError("Unknown option '\(name)'.")
            }
            if spec.kind == .flag {
                guard inline == nil else { throw ValidationError("'\(name)' takes no value.") }
                flags.insert(name)
                continue
            }
            // The next word is the value unless it is one of this command's options, so `--store --json` is a
            // missing value while `--token -x1` keeps its token (which an "unknown option" error would print).
            if inline == nil, index < words.count, !Self.isDeclared(words[index], in: specs) {
                inline = words[index]
                index += 1
            }
            guard let value = inline else { throw ValidationError("Missing value for '\(name)'.") }
            if spec.kind == .single, values[name] != nil {
                throw ValidationError("'\(name)' was given more than once.")
            }
            values[name, default: []].append(value)
        }
    }

    private static func isDeclared(_ word: String, in specs: [OptionSpec]) -> Bool {
        let name = word.split(separator: "=", maxSplits: 1).first.map(String.init) ?? word
        return specs.contains { $0.name == name } || ["-h", "--help"].contains(word)
    }

    /// Whether `word` is an option rather than a value: it starts with a dash and is not a negative number, so
    /// `--limit -1` reaches the range check instead of reading as a missing value.
    private static func looksLikeOption(_ word: String) -> Bool {
        guard word.hasPrefix("-"), word.count > 1 else { return false }
        return !(word.dropFirst().first?.isNumber ?? false)
    }

    /// Where a value came from.
    enum Origin: Sendable, Equatable {
        case commandLine, environment, defaultValue
    }

    /// The value of a single-value option and where it came from: the command line, then the environment
    /// variable (ignored when empty), then the default; nil when none of them has one.
    func resolved(_ spec: OptionSpec) -> (value: String, origin: Origin)? {
        if let given = values[spec.name]?.first { return (given, .commandLine) }
        if let variable = spec.environment, let value = environment[variable], !value.isEmpty {
            return (value, .environment)
        }
        return spec.defaultValue.map { ($0, .defaultValue) }
    }

    /// The value of a single-value option (command line, environment, default), or nil.
    func string(_ spec: OptionSpec) -> String? { resolved(spec)?.value }

    /// Every value of a repeatable option, in command-line order.
    func strings(_ spec: OptionSpec) -> [String] { values[spec.name] ?? [] }

    /// Whether a flag was given.
    func flag(_ spec: OptionSpec) -> Bool { flags.contains(spec.name) }

    /// A single-value option as a whole number within `range`, or nil when it has no value.
    ///
    /// - Throws: ``ValidationError`` naming the option and the range for anything else.
    func int(_ spec: OptionSpec, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = string(spec) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw ValidationError(
                "The value '\(text)' is invalid for '\(spec.name)': expected a whole number from "
                    + "\(range.lowerBound) to \(range.upperBound).")
        }
        return value
    }
}
