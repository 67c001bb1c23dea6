/// Exit codes of the tool, as sysexits(3) defines them; every outcome of every command is one of these.
enum ExitCode {
    static let success: Int32 = 0
    /// EX_USAGE: the command line is wrong; nothing was done.
    static let usage: Int32 = 64
    /// EX_DATAERR: the input data (a cache file) is damaged or not what it should be.
    static let dataError: Int32 = 65
    /// EX_NOINPUT: an input file does not exist or cannot be read.
    static let noInput: Int32 = 66
    /// EX_UNAVAILABLE: a service (the server) cannot be reached.
    static let unavailable: Int32 = 69
    /// EX_SOFTWARE: an internal error (the library misbehaved).
    static let software: Int32 = 70
    /// EX_IOERR: reading or writing a local file failed.
    static let ioError: Int32 = 74
    /// EX_TEMPFAIL: a temporary failure (a timeout, a busy file); trying again later may work.
    static let temporaryFailure: Int32 = 75
    /// EX_PROTOCOL: the server answered with an error or something the protocol does not allow.
    static let protocolError: Int32 = 76
    /// EX_NOPERM: a credential (a token, a key) was refused.
    static let noPermission: Int32 = 77

    /// The sysexits name of `code` without its `EX_` prefix, lowercased (`protocol` for 76): the `kind` of a
    /// JSON error object.
    static func kind(_ code: Int32) -> String {
        switch code {
        case usage: "usage"
        case dataError: "dataerr"
        case noInput: "noinput"
        case unavailable: "unavailable"
        case software: "software"
        case ioError: "ioerr"
        case temporaryFailure: "tempfail"
        case protocolError: "protocol"
        case noPermission: "noperm"
        default: "failure"
        }
    }
}

/// A failure the tool reports with its own exit code: each problem goes to standard error as `Error: <line>`
/// (and, with `--json`, to standard output as an error object); the exit code is the first problem's.
struct ToolFailure: Error, Sendable {
    /// One thing that went wrong.
    struct Problem: Sendable, Equatable {
        /// Its exit code, from ``ExitCode``.
        let code: Int32
        /// One line that never holds a secret.
        let message: String
        /// The conversation it concerns, when it concerns one.
        let conversation: String?
    }

    /// The problems in the order they happened; never empty.
    let problems: [Problem]

    init(problems: [Problem]) {
        self.problems =
            problems.isEmpty ? [Problem(code: ExitCode.software, message: "failed", conversation: nil)] : problems
    }

    init(_ code: Int32, _ lines: [String]) {
        self.init(problems: lines.map { Problem(code: code, message: $0, conversation: nil) })
    }

    init(_ code: Int32, _ line: String) { self.init(code, [line]) }

    /// The exit code: the first problem's.
    var code: Int32 { problems[0].code }
    /// One line per problem.
    var lines: [String] { problems.map(\.message) }
}
