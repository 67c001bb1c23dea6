/// The command-line words not yet consumed by a command, with typed accessors for options.
///
/// Options are kebab-case and take their value either as the next word or after `=`
/// (`--store PATH`, `--store=PATH`). Anything left over when a command finishes parsing is a
/// usage error, so that a typo never silently changes what the tool does.
struct Arguments: Sendable {
    private(set) var words: [String]

    init(_ words: [String]) { self.words = words }

    /// Whether no words remain.
    var isEmpty: Bool { words.isEmpty }

    /// Removes and returns the next word when it is not an option.
    mutating func popPositional() -> String? {
        guard let first = words.first, !first.hasPrefix("-") else { return nil }
        words.removeFirst()
        return first
    }

    /// Removes a boolean flag wherever it stands; returns whether it was present.
    mutating func flag(_ names: String...) -> Bool {
        var found = false
        words.removeAll { word in
            let hit = names.contains(word)
            found = found || hit
            return hit
        }
        return found
    }

    /// Removes `--name value` or `--name=value` and returns the value, or nil when absent.
    ///
    /// - Throws: ``UsageError`` when the option is present without a value.
    mutating func option(_ name: String) throws -> String? {
        var index = 0
        while index < words.count {
            let word = words[index]
            if word == name {
                guard index + 1 < words.count else { throw UsageError(message: "Missing value for '\(name)'.") }
                let value = words[index + 1]
                words.removeSubrange(index...(index + 1))
                return value
            }
            if word.hasPrefix(name + "=") {
                words.remove(at: index)
                return String(word.dropFirst(name.count + 1))
            }
            index += 1
        }
        return nil
    }

    /// Like ``option(_:)`` but parsed as an integer within `range`.
    mutating func intOption(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = try option(name) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw UsageError(
                message: "The value '\(text)' is invalid for '\(name)': expected a whole number from "
                    + "\(range.lowerBound) to \(range.upperBound).")
        }
        return value
    }

    /// Fails when anything is left, naming the first unexpected word.
    func finish() throws {
        guard let first = words.first else { return }
        if first.hasPrefix("-") { throw UsageError(message: "Unknown option '\(first)'.") }
        throw UsageError(message: "Unexpected argument '\(first)'.")
    }
}
