import Foundation
import Synchronization

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
    private let buffers = Mutex((output: "", error: ""))

    /// A console that writes to file descriptors 1 and 2 (`capturing: false`) or keeps what is written.
    init(capturing: Bool) { self.capturing = capturing }

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
        let bytes = Array(text.utf8)
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
