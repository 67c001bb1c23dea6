/// How much a log record matters, from chatter to failures the app should see.
public enum LogLevel: Int, Sendable, Comparable, CustomStringConvertible {
    /// In order of importance: `debug` (chatter for developers), `info`, `notice` (something unusual the
    /// code handled), `warning` (data skipped or a limit hit), `error` (an operation failed).
    case debug, info, notice, warning, error

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "error"
        }
    }
}

/// One line of the engine's log: what happened, where, and how much it matters.
///
/// - Warning: Tidings never puts tokens, keys or message content in a record; apps that add
///   their own records must do the same.
public struct LogRecord: Sendable, CustomStringConvertible {
    /// How much the record matters.
    public var level: LogLevel
    /// The part of Tidings that wrote it (`store`, `websocket`, `kecalek`).
    public var subsystem: String
    /// The text of the record.
    public var message: String

    /// Creates a record; `message` must already be free of secrets and message content.
    public init(level: LogLevel, subsystem: String, message: String) {
        self.level = level
        self.subsystem = subsystem
        self.message = message
    }

    public var description: String { "[\(level)] \(subsystem): \(message)" }
}

/// A cheap, `Sendable` handle that sends records at or above a level to a sink the app chooses.
///
/// Messages are built lazily, so a disabled level costs one comparison. For example:
///
/// ```swift
/// let log = Logger(subsystem: "kecalek", minimumLevel: .info) { print($0) }
/// log.warning("ignored unknown notification type \(type)")
/// ```
public struct TidingsLogger: Sendable {
    /// The subsystem stamped on every record.
    public let subsystem: String
    /// Records below this level are dropped before their message is built.
    public let minimumLevel: LogLevel
    private let sink: @Sendable (LogRecord) -> Void

    /// Creates a logger that hands each record at or above `minimumLevel` to `sink`.
    public init(subsystem: String, minimumLevel: LogLevel = .info, sink: @escaping @Sendable (LogRecord) -> Void) {
        self.subsystem = subsystem
        self.minimumLevel = minimumLevel
        self.sink = sink
    }

    /// A logger that drops everything.
    public static let disabled = TidingsLogger(subsystem: "", minimumLevel: .error) { _ in }

    /// The same sink and level under another subsystem name.
    public func scoped(_ subsystem: String) -> TidingsLogger {
        TidingsLogger(subsystem: subsystem, minimumLevel: minimumLevel, sink: sink)
    }

    /// Records `message` at `level` when the level is enabled.
    public func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard level >= minimumLevel else { return }
        sink(LogRecord(level: level, subsystem: subsystem, message: message()))
    }

    /// Records a debug message.
    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
    /// Records an informational message.
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    /// Records something notable but expected.
    public func notice(_ message: @autoclosure () -> String) { log(.notice, message()) }
    /// Records something that went wrong and was handled.
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    /// Records a failure.
    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }
}
