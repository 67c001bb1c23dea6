/// The line being typed in the terminal: its characters, the cursor, and the lines entered before
/// (recalled with Up and Down, as a shell does).
///
/// Why scalars and a byte buffer: keys arrive as single UTF-8 bytes, and the cursor must move over
/// whole characters, never land inside one. A column is assumed per scalar (wide East Asian characters
/// and emoji are drawn wider than the cursor arithmetic thinks).
struct LineEditor {
    /// The scalars typed so far.
    private(set) var scalars: [Unicode.Scalar] = []
    /// Where the next character goes (0 ... `scalars.count`).
    private(set) var cursor = 0
    /// The lines entered, oldest first (hidden lines, such as a password, are never kept).
    private(set) var history: [String] = []
    /// The most lines `history` keeps.
    let historyLimit: Int
    private var pending: [UInt8] = []
    private var browsing: Int?
    private var draft: [Unicode.Scalar] = []

    init(historyLimit: Int = 200) { self.historyLimit = max(0, historyLimit) }

    /// The line as text.
    var text: String { String(String.UnicodeScalarView(scalars)) }
    /// How many columns the cursor is left of the line's end.
    var columnsAfterCursor: Int { scalars.count - cursor }
    /// Whether nothing is typed.
    var isEmpty: Bool { scalars.isEmpty && pending.isEmpty }

    /// A typed byte; a character is inserted at the cursor once its UTF-8 sequence is complete.
    mutating func type(_ byte: UInt8) {
        if byte & 0xC0 == 0x80, pending.isEmpty { return }  // a continuation byte without a lead
        if byte & 0xC0 != 0x80 { pending = [] }  // a new lead byte ends an unfinished sequence
        pending.append(byte)
        guard pending.count >= Self.sequenceLength(pending[0]) else { return }
        let decoded = String(decoding: pending, as: UTF8.self).unicodeScalars
        pending = []
        scalars.insert(contentsOf: decoded, at: cursor)
        cursor += decoded.count
    }

    /// Removes the character left of the cursor.
    mutating func backspace() {
        guard cursor > 0 else { return }
        cursor -= 1
        scalars.remove(at: cursor)
    }

    /// Removes the character under the cursor.
    mutating func delete() {
        guard cursor < scalars.count else { return }
        scalars.remove(at: cursor)
    }

    /// Moves the cursor one character left.
    mutating func left() { cursor = max(0, cursor - 1) }
    /// Moves the cursor one character right.
    mutating func right() { cursor = min(scalars.count, cursor + 1) }
    /// Moves the cursor to the line's start.
    mutating func home() { cursor = 0 }
    /// Moves the cursor to the line's end.
    mutating func end() { cursor = scalars.count }

    /// Forgets the typed text.
    mutating func clear() {
        scalars = []
        pending = []
        cursor = 0
    }

    /// Shows the line entered before the one shown (the typed draft is kept for ``next()``).
    mutating func previous() {
        guard !history.isEmpty else { return }
        let index: Int
        if let browsing {
            index = max(0, browsing - 1)
        } else {
            draft = scalars
            index = history.count - 1
        }
        show(index)
    }

    /// Shows the line entered after the one shown, or the draft after the newest.
    mutating func next() {
        guard let browsing else { return }
        if browsing + 1 < history.count {
            show(browsing + 1)
        } else {
            self.browsing = nil
            scalars = draft
            cursor = scalars.count
        }
    }

    /// Takes the line (Enter): returns it, keeps it in the history unless `remember` is false or it is
    /// empty or the same as the newest, and starts an empty line.
    mutating func take(remember: Bool) -> String {
        let line = text
        clear()
        browsing = nil
        draft = []
        if remember, !line.isEmpty, history.last != line {
            history.append(line)
            if history.count > historyLimit { history.removeFirst(history.count - historyLimit) }
        }
        return line
    }

    private mutating func show(_ index: Int) {
        browsing = index
        scalars = Array(history[index].unicodeScalars)
        pending = []
        cursor = scalars.count
    }

    /// The length of a UTF-8 sequence by its lead byte (1 for bytes no sequence starts with).
    private static func sequenceLength(_ lead: UInt8) -> Int {
        switch lead {
        case 0xC0...0xDF: 2
        case 0xE0...0xEF: 3
        case 0xF0...0xF7: 4
        default: 1
        }
    }
}
