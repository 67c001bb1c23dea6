import Foundation
import TidingsCore

/// The terminal's last line — a prompt and what the person is typing — and everything printed above it.
///
/// Why one lock for output and editing: lines printed for incoming events and the echo of typed keys come
/// from two threads; under one lock a printed line first clears the input line, then redraws the prompt
/// and the typed text after it, so events never garble what the person is typing. Without a terminal
/// (a pipe) there is no prompt and no echo: lines are printed as they are.
final class TerminalScreen: Sendable {
    /// Whether standard input is a terminal (raw-mode editing, prompt, redraws).
    let isInteractive: Bool
    private let console: Console
    private struct Line {
        var prompt = ""
        var editor = LineEditor()
        var hidden = false
        var visible: String { hidden ? "" : editor.text }
        /// The whole input line, with the cursor put back where it is in the text.
        var drawn: String {
            let back = hidden ? 0 : editor.columnsAfterCursor
            return "\r\u{1B}[2K" + prompt + visible + (back > 0 ? "\u{1B}[\(back)D" : "")
        }
    }
    private let line = LockedState(Line())

    init(interactive: Bool, console: Console) {
        isInteractive = interactive
        self.console = console
    }

    /// Prints `lines` above the input line.
    func print(_ lines: [String]) {
        guard !lines.isEmpty else { return }
        line.withLock { line in
            let text = lines.map { $0 + "\n" }.joined()
            console.writeOutput(isInteractive ? "\r\u{1B}[2K" + text + line.drawn : text)
        }
    }

    /// Shows `prompt` before the typed text (interactive only).
    func setPrompt(_ prompt: String) {
        guard isInteractive else { return }
        line.withLock { line in
            guard line.prompt != prompt else { return }
            line.prompt = prompt
            console.writeOutput(line.drawn)
        }
    }

    /// Whether the next line is typed without echo (a password) and kept out of the history.
    func setHidden(_ hidden: Bool) { line.withLock { $0.hidden = hidden } }

    /// A typed byte: inserted at the cursor, and the line drawn again (nothing shown while hidden).
    func type(_ byte: UInt8) { edit { $0.type(byte) } }

    /// A key that edits the line or moves in it or in the history.
    func edit(_ key: TerminalKey) {
        edit { editor in
            switch key {
            case .backspace: editor.backspace()
            case .delete: editor.delete()
            case .left: editor.left()
            case .right: editor.right()
            case .home: editor.home()
            case .end: editor.end()
            case .up: editor.previous()
            case .down: editor.next()
            case .clear: editor.clear()
            }
        }
    }

    private func edit(_ change: (inout LineEditor) -> Void) {
        line.withLock { line in
            change(&line.editor)
            console.writeOutput(line.drawn)
        }
    }

    /// Whether nothing is typed.
    var isEmpty: Bool { line.withLock { $0.editor.isEmpty } }

    /// The typed line, taken off the screen (Enter): it reappears only as the lines it causes, and in
    /// the history unless it was hidden.
    func takeLine() -> String {
        line.withLock { line in
            let text = line.editor.take(remember: !line.hidden)
            line.hidden = false
            console.writeOutput(line.drawn)
            return text
        }
    }
}

/// The editing keys of the input line.
enum TerminalKey: Sendable {
    /// Backspace, Delete, the arrows, Home and End, Ctrl-U.
    case backspace, delete, left, right, home, end, up, down, clear
}
