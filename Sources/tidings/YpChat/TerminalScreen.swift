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
        var typed: [UInt8] = []
        var hidden = false
        var visible: String { hidden ? "" : String(decoding: typed, as: UTF8.self) }
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
            console.writeOutput(isInteractive ? "\r\u{1B}[2K" + text + line.prompt + line.visible : text)
        }
    }

    /// Shows `prompt` before the typed text (interactive only).
    func setPrompt(_ prompt: String) {
        guard isInteractive else { return }
        line.withLock { line in
            guard line.prompt != prompt else { return }
            line.prompt = prompt
            console.writeOutput("\r\u{1B}[2K" + line.prompt + line.visible)
        }
    }

    /// Whether the next line is typed without echo (a password).
    func setHidden(_ hidden: Bool) { line.withLock { $0.hidden = hidden } }

    /// A typed byte: kept and echoed.
    func type(_ byte: UInt8) {
        line.withLock { line in
            line.typed.append(byte)
            if !line.hidden { console.writeOutput(String(decoding: [byte], as: UTF8.self)) }
        }
    }

    /// Removes the last typed character (all bytes of its UTF-8 sequence).
    func backspace() {
        line.withLock { line in
            guard !line.typed.isEmpty else { return }
            while let last = line.typed.popLast(), last & 0xC0 == 0x80 {}
            console.writeOutput("\r\u{1B}[2K" + line.prompt + line.visible)
        }
    }

    /// Forgets the typed text.
    func clearTyped() {
        line.withLock { line in
            line.typed.removeAll()
            console.writeOutput("\r\u{1B}[2K" + line.prompt)
        }
    }

    /// Whether nothing is typed.
    var isEmpty: Bool { line.withLock { $0.typed.isEmpty } }

    /// The typed line, taken off the screen (Enter): it reappears only as the lines it causes.
    func takeLine() -> String {
        line.withLock { line in
            let text = String(decoding: line.typed, as: UTF8.self)
            line.typed.removeAll()
            line.hidden = false
            console.writeOutput("\r\u{1B}[2K" + line.prompt)
            return text
        }
    }
}
