import Foundation
import TidingsCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where the tool writes: the process's standard output and error, or two buffers when a command runs in
/// process (``Runner/capture(_:environment:)``), so tests read exactly what the binary would print.
final class Console: Sendable {
    /// The console of the running command; a task-local so that in-process runs capture concurrently without
    /// seeing each other's output.
    @TaskLocal static var current = Console(capturing: false)

    private let capturing: Bool
    private let buffers = LockedState((output: "", error: ""))
    private let outputBytes = LockedState([UInt8]())
    /// What an in-process run reads as standard input.
    private let input: [UInt8]

    /// A console that writes to file descriptors 1 and 2 (`capturing: false`) or keeps what is written; a
    /// capturing console reads `input` as standard input.
    init(capturing: Bool, input: [UInt8] = []) {
        self.capturing = capturing
        self.input = input
    }

    /// Every byte written with ``writeOutput(bytes:)`` so far (empty unless capturing).
    var capturedOutputBytes: [UInt8] { outputBytes.withLock { $0 } }

    /// Writes raw bytes (a decrypted payload need not be text) to standard output.
    func writeOutput(bytes: [UInt8]) {
        if capturing {
            outputBytes.withLock { $0 += bytes }
            buffers.withLock { $0.output += String(decoding: bytes, as: UTF8.self) }
        } else {
            Self.writeAll(bytes, to: 1)
        }
    }

    /// Standard input up to end-of-file, or nil when it holds more than `limit` bytes.
    ///
    /// The process's descriptor 0 is read on a thread of its own (a pipe may block for as long as the writer
    /// likes), never on a thread of Swift's cooperative pool; the caller suspends meanwhile.
    func readStandardInput(limit: Int) async throws -> [UInt8]? {
        if capturing { return input.count > limit ? nil : input }
        return try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try Self.readAll(from: 0, limit: limit) }) }
            thread.name = "tidings stdin"
            thread.start()
        }
    }

    /// Why standard input could not be read.
    struct InputError: Error, CustomStringConvertible {
        let description: String
    }

    private static func readAll(from descriptor: Int32, limit: Int) throws -> [UInt8]? {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(descriptor, &chunk, chunk.count)
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw InputError(description: "reading standard input failed: errno \(errno)") }
            if count == 0 { return bytes }
            guard bytes.count <= limit - count else { return nil }
            bytes += chunk[0..<count]
        }
    }

    /// Everything written to standard output so far (empty unless capturing).
    var capturedOutput: String { buffers.withLock { $0.output } }
    /// Everything written to standard error so far (empty unless capturing).
    var capturedError: String { buffers.withLock { $0.error } }

    /// Writes `text` to standard output, unbuffered, so lines interleave with standard error in order.
    func writeOutput(_ text: String) {
        if capturing { buffers.withLock { $0.output += text } } else { Self.writeAll(text, to: 1) }
    }

    /// Writes `text` to standard error, unbuffered.
    func writeError(_ text: String) {
        if capturing { buffers.withLock { $0.error += text } } else { Self.writeAll(text, to: 2) }
    }

    private static func writeAll(_ text: String, to descriptor: Int32) {
        writeAll(Array(text.utf8), to: descriptor)
    }

    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }
}

/// The tool's `print`: shadows the standard library's inside this module so that every command, demo part
/// included, writes through ``Console/current`` and can be captured in process.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    Console.current.writeOutput(items.map { "\($0)" }.joined(separator: separator) + terminator)
}

/// Writes `text` to the current console's standard error.
func writeStandardError(_ text: String) {
    Console.current.writeError(text)
}
