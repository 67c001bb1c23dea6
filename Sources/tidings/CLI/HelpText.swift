/// USAGE lines and help text derived from a command's ``OptionSpec``s, with columns sized to the longest entry.
enum HelpText {
    /// Help text lines are wrapped to this width; an entry's continuation lines keep its column.
    static let width = 100

    /// The `-h, --help` entry every command has.
    static let helpEntry = (left: "-h, --help", right: "Show help information.")

    /// `tidings <path> [--opt <value>] [--many <value> ...]`, or `tidings <path> <subcommand>` for a group.
    static func usage(_ command: Command, path: [String]) -> String {
        var words = ["tidings"] + path
        for option in command.options {
            words.append(option.kind == .repeating ? "[\(option.synopsis) ...]" : "[\(option.synopsis)]")
        }
        if !command.subcommands.isEmpty { words.append("<subcommand>") }
        return words.joined(separator: " ")
    }

    /// The OPTIONS text of one option: its help, then its repeatability, default and environment variable.
    static func description(_ option: OptionSpec) -> String {
        var text = option.help
        if option.kind == .repeating { text += " Repeatable." }
        if let value = option.defaultValue { text += " (default: \(value))" }
        if let variable = option.environment { text += " (env: \(variable))" }
        return text
    }

    /// The text printed by `--help`, `-h` and `help <command>`.
    static func help(_ command: Command, path: [String]) -> String {
        var lines = ["OVERVIEW: \(command.abstract)", "", "USAGE: \(usage(command, path: path))", "", "OPTIONS:"]
        let entries = command.options.map { ($0.synopsis, description($0)) } + [helpEntry]
        lines += table(entries)
        if !command.discussion.isEmpty { lines += [""] + command.discussion }
        if !command.subcommands.isEmpty {
            lines += ["", "SUBCOMMANDS:"] + table(command.subcommands.map { ($0.name, $0.abstract) })
            let prefix = (["tidings"] + path).joined(separator: " ")
            lines += ["", "  See '\(prefix) help <subcommand>' for detailed help."]
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Two columns: the left indented by two, the right starting two spaces after the longest left entry and
    /// wrapped at ``width`` with its continuation lines under its first.
    static func table(_ entries: [(left: String, right: String)]) -> [String] {
        let column = 2 + (entries.map(\.left.count).max() ?? 0) + 2
        var lines: [String] = []
        for entry in entries {
            let pad = String(repeating: " ", count: column - 2 - entry.left.count)
            let wrapped = wrap(entry.right, width: max(width - column, 30))
            lines.append("  " + entry.left + pad + (wrapped.first ?? ""))
            for more in wrapped.dropFirst() { lines.append(String(repeating: " ", count: column) + more) }
        }
        return lines
    }

    /// Splits `text` at spaces into lines of at most `width` characters (a longer word gets a line of its own).
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty || lines.isEmpty { lines.append(line) }
        return lines
    }
}
