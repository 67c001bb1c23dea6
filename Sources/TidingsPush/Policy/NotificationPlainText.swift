/// `NotificationPlainText` turns a status's HTML into the plain text a notification shows: small, total
/// (never traps, whatever the input) and linear in the input's length.
///
/// - `<br>` becomes a newline and the end of a `<p>` a blank line; other tags are removed and their text kept,
///   so a link becomes its text. Mastodon's `<span class="invisible">` parts of a link are dropped and its
///   `<span class="ellipsis">` gets a "…", as the web client shows them; `<script>`/`<style>` text is dropped.
/// - Entities: the named ones Mastodon emits (`&amp; &lt; &gt; &quot; &apos; &nbsp;`) and numeric ones
///   (`&#39;`, `&#x1F600;`); a numeric entity that is no Unicode scalar becomes U+FFFD; anything else stays
///   as written.
/// - Source whitespace collapses to single spaces; at most one blank line in a row; trimmed.
public enum NotificationPlainText {
    /// The body's length limit in characters (grapheme clusters), the "…" included.
    public static let maximumLength = 240

    /// The plain text of `html`.
    public static func fromHTML(_ html: String) -> String {
        var scanner = Scanner(Array(html.unicodeScalars))
        return scanner.run()
    }

    /// `text` cut to `maximumLength` characters (the last one a "…" when cut), at a word boundary when one is
    /// within the last 20 characters.
    public static func truncated(_ text: String, to maximumLength: Int = maximumLength) -> String {
        guard maximumLength > 0 else { return "" }
        guard text.count > maximumLength else { return text }
        var cut = String(text.prefix(maximumLength - 1))
        if let space = cut.lastIndex(where: { $0 == " " || $0 == "\n" }),
            cut.distance(from: space, to: cut.endIndex) <= 20
        {
            cut = String(cut[..<space])
        }
        while let last = cut.last, last == " " || last == "\n" { cut.removeLast() }
        return cut + "…"
    }

    private struct Scanner {
        let input: [Unicode.Scalar]
        var index = 0
        var output = String.UnicodeScalarView()
        /// One entry per open `<span>`: whether it is invisible or an ellipsis.
        var spans: [SpanKind] = []
        var hiddenDepth = 0
        var pendingSpace = false
        /// Set by a `<script>` or `<style>` tag: its text up to this end tag is dropped.
        var skipUntil: [Unicode.Scalar]?
        /// Where a search for `>` last ran off the end: no tag can close after it, so a later `<` is text at once.
        /// Without it, text full of `<a` rescans the rest of the input for every `<` (quadratic; found by the
        /// FuzzNotificationPlainText target).
        var unclosedFrom = Int.max

        enum SpanKind { case plain, invisible, ellipsis }

        init(_ input: [Unicode.Scalar]) { self.input = input }

        mutating func run() -> String {
            while index < input.count {
                let scalar = input[index]
                if scalar == "<", let end = tagEnd(from: index) {
                    handleTag(String(String.UnicodeScalarView(input[(index + 1)..<end])))
                    index = end + 1
                    if let closer = skipUntil {
                        // Skip to the matching end tag (handled as a tag next), or to the end of the input.
                        while index < input.count, !matches(closer, at: index) { index += 1 }
                        skipUntil = nil
                    }
                } else if scalar == "&" {
                    let (decoded, length) = entity(at: index)
                    emit(decoded)
                    index += length
                } else {
                    emit(String(scalar))
                    index += 1
                }
            }
            return finish()
        }

        mutating func tagEnd(from start: Int) -> Int? {
            var cursor = start + 1
            guard cursor < input.count, cursor < unclosedFrom,
                input[cursor] == "/" || input[cursor] == "!" || input[cursor].properties.isAlphabetic
            else { return nil }
            while cursor < input.count {
                if input[cursor] == ">" { return cursor }
                cursor += 1
            }
            unclosedFrom = start
            return nil
        }

        mutating func handleTag(_ tag: String) {
            let closing = tag.hasPrefix("/")
            let name = String(tag.drop { $0 == "/" }.prefix { $0.isLetter || $0.isNumber }).lowercased()
            switch (name, closing) {
            case ("br", _): newline(1)
            case ("p", true), ("div", true), ("li", true), ("blockquote", true): newline(2)
            case ("span", false):
                let kind: SpanKind =
                    tag.contains("invisible") ? .invisible : tag.contains("ellipsis") ? .ellipsis : .plain
                spans.append(kind)
                if kind == .invisible { hiddenDepth += 1 }
            case ("span", true):
                guard let kind = spans.popLast() else { return }
                if kind == .invisible { hiddenDepth -= 1 }
                if kind == .ellipsis { emit("…") }
            case ("script", false), ("style", false): skipUntil = Array("</\(name)".unicodeScalars)
            default: break
            }
        }

        func matches(_ pattern: [Unicode.Scalar], at position: Int) -> Bool {
            guard position + pattern.count <= input.count else { return false }
            for offset in 0..<pattern.count
            where input[position + offset].properties.lowercaseMapping != String(pattern[offset]) {
                return false
            }
            return true
        }

        func entity(at start: Int) -> (String, Int) {
            var cursor = start + 1
            var name = ""
            while cursor < input.count, cursor - start <= 10, input[cursor] != ";" {
                name.unicodeScalars.append(input[cursor])
                cursor += 1
            }
            guard cursor < input.count, input[cursor] == ";", !name.isEmpty else { return ("&", 1) }
            let length = cursor - start + 1
            switch name {
            case "amp": return ("&", length)
            case "lt": return ("<", length)
            case "gt": return (">", length)
            case "quot": return ("\"", length)
            case "apos": return ("'", length)
            case "nbsp": return (" ", length)
            default: break
            }
            guard name.hasPrefix("#") else { return ("&", 1) }
            let digits = name.dropFirst()
            let value: UInt32?
            if let first = digits.first, first == "x" || first == "X" {
                value = UInt32(digits.dropFirst(), radix: 16)
            } else {
                value = UInt32(digits, radix: 10)
            }
            guard let value else { return ("&", 1) }
            guard value != 0, let scalar = Unicode.Scalar(value) else { return ("\u{FFFD}", length) }
            return (String(scalar), length)
        }

        mutating func emit(_ text: String) {
            guard hiddenDepth == 0 else { return }
            for scalar in text.unicodeScalars {
                if scalar == " " || scalar == "\n" || scalar == "\t" || scalar == "\r" {
                    pendingSpace = true
                    continue
                }
                if pendingSpace, let last = output.last, last != "\n" { output.append(" ") }
                pendingSpace = false
                output.append(scalar)
            }
        }

        mutating func newline(_ count: Int) {
            guard hiddenDepth == 0 else { return }
            pendingSpace = false
            while let last = output.last, last == " " { output.removeLast() }
            guard !output.isEmpty else { return }
            var trailing = 0
            for scalar in output.reversed() {
                guard scalar == "\n" else { break }
                trailing += 1
            }
            for _ in trailing..<max(trailing, count) { output.append("\n") }
        }

        func finish() -> String {
            var text = String(output)
            while let last = text.last, last == "\n" || last == " " { text.removeLast() }
            return text
        }
    }
}
