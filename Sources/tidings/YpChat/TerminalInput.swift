import Foundation
import TidingsCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Lines from standard input, read on a thread of their own (never a thread of Swift's pool).
///
/// On a terminal the input is switched to raw mode (no canonical editing, no echo, no signals from
/// keys) and edited through a ``TerminalScreen``: printable bytes, Backspace, Delete, Left/Right,
/// Home/End (also Ctrl-A/Ctrl-E), Up/Down through the lines entered before, Ctrl-U (clear), Enter;
/// Ctrl-C reads as `:quit`, Ctrl-D on an empty line as end of input; other escape sequences are
/// ignored. ``restoreTerminal()`` puts the terminal back. From a pipe, lines are split at `\n`
/// (a trailing `\r` dropped).
enum TerminalInput {
    private static let saved = TerminalSettings()

    /// The lines; the stream ends at end of input.
    static func lines(screen: TerminalScreen) -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        let interactive = screen.isInteractive
        if interactive { saved.enterRawMode() }
        let thread = Thread {
            if interactive { readKeys(screen, continuation) } else { readLines(continuation) }
            continuation.finish()
        }
        thread.name = "tidings.ypchat.input"
        thread.start()
        return stream
    }

    /// Restores the terminal's settings from before raw mode (nothing when it was not changed).
    static func restoreTerminal() { saved.restore() }

    private static func readByte() -> UInt8? {
        var byte: UInt8 = 0
        while true {
            let count = read(0, &byte, 1)
            if count == 1 { return byte }
            if count < 0, errno == EINTR { continue }
            return nil
        }
    }

    private static func readKeys(_ screen: TerminalScreen, _ continuation: AsyncStream<String>.Continuation) {
        while let byte = readByte() {
            switch byte {
            case 0x0D, 0x0A: continuation.yield(screen.takeLine())
            case 0x7F, 0x08: screen.edit(.backspace)
            case 0x15: screen.edit(.clear)
            case 0x01: screen.edit(.home)
            case 0x05: screen.edit(.end)
            case 0x03:
                continuation.yield(":quit")
                return
            case 0x04:
                if screen.isEmpty { return }
            case 0x1B:
                // An escape sequence: ESC [ parameters final-byte (CSI), ESC O final-byte, or ESC and one byte.
                guard let next = readByte(), next == UInt8(ascii: "[") || next == UInt8(ascii: "O") else { continue }
                var parameters: [UInt8] = []
                while let part = readByte() {
                    guard (0x40...0x7E).contains(part) else {
                        parameters.append(part)
                        continue
                    }
                    if let key = key(final: part, parameters: parameters) { screen.edit(key) }
                    break
                }
            case 0x20...0xFF: screen.type(byte)
            default: continue
            }
        }
    }

    /// The editing key of an escape sequence (xterm's and the VT220's forms), nil for others.
    private static func key(final: UInt8, parameters: [UInt8]) -> TerminalKey? {
        switch final {
        case UInt8(ascii: "A"): .up
        case UInt8(ascii: "B"): .down
        case UInt8(ascii: "C"): .right
        case UInt8(ascii: "D"): .left
        case UInt8(ascii: "H"): .home
        case UInt8(ascii: "F"): .end
        case UInt8(ascii: "~"):
            switch String(decoding: parameters, as: UTF8.self) {
            case "1", "7": .home
            case "4", "8": .end
            case "3": .delete
            default: nil
            }
        default: nil
        }
    }

    private static func readLines(_ continuation: AsyncStream<String>.Continuation) {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(0, &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            pending += buffer[0..<count]
            while let newline = pending.firstIndex(of: 0x0A) {
                var line = Array(pending[..<newline])
                if line.last == 0x0D { line.removeLast() }
                continuation.yield(String(decoding: line, as: UTF8.self))
                pending.removeSubrange(...newline)
            }
        }
        if !pending.isEmpty { continuation.yield(String(decoding: pending, as: UTF8.self)) }
    }
}

/// The terminal's settings before raw mode, kept to restore them.
private final class TerminalSettings: Sendable {
    private let original = LockedTermios()

    func enterRawMode() {
        var settings = termios()
        guard tcgetattr(0, &settings) == 0 else { return }
        original.set(settings)
        var raw = settings
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG | IEXTEN)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        tcsetattr(0, TCSAFLUSH, &raw)
    }

    func restore() {
        guard var settings = original.take() else { return }
        tcsetattr(0, TCSAFLUSH, &settings)
    }
}

/// The saved `termios`, behind the project's lock box (`termios` is a C struct, plainly `Sendable` here).
private struct LockedTermios: Sendable {
    private let box = LockedState<termios?>(nil)
    func set(_ value: termios) { box.withLock { $0 = value } }
    func take() -> termios? {
        box.withLock { value in
            defer { value = nil }
            return value
        }
    }
}
