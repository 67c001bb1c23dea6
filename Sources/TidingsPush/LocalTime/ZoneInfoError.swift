/// Why a zone's rules could not be read. Every malformed, truncated or hostile TZif file or TZ string ends in one
/// of these, never in a trap.
public enum ZoneInfoError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The identifier is empty, too long, absolute, or has a `.`/`..` component or a character outside
    /// `A–Z a–z 0–9 . _ + -` and `/`: it could name a file outside the zone directory.
    case invalidIdentifier
    /// The file could not be opened or read (`errno`).
    case unreadable(path: String, errno: Int32)
    /// The file is larger than ``ZoneInfo/maximumFileSize``.
    case tooLarge
    /// The data does not start with the `TZif` magic.
    case notTZif
    /// The data ends before what its header announces.
    case truncated
    /// A header count breaks RFC 8536 §3.1 (no types, no designation bytes, indicator counts that are neither 0
    /// nor the type count, more than 256 types).
    case invalidCounts
    /// Transition times that do not strictly increase, or a transition naming a type that does not exist.
    case invalidTransitions
    /// A local time type with an offset outside −25:59:59…+25:59:59, a DST flag other than 0 or 1, or a
    /// designation index past the designations.
    case invalidTimeType
    /// The footer (a POSIX TZ string between newlines, RFC 8536 §3.3) is missing, unterminated or malformed.
    case invalidFooter
    /// A TZ string (environment or footer) that is not a POSIX TZ string this reader knows.
    case invalidPOSIXString

    /// One line for a log or an error message; it names a path at most, never file contents.
    public var description: String {
        switch self {
        case .invalidIdentifier: "not a time zone identifier"
        case .unreadable(let path, let errno): "cannot read \(path) (errno \(errno))"
        case .tooLarge: "the zone file is too large"
        case .notTZif: "not a TZif file"
        case .truncated: "the TZif file is truncated"
        case .invalidCounts: "the TZif header's counts are invalid"
        case .invalidTransitions: "the TZif transitions are invalid"
        case .invalidTimeType: "a TZif local time type is invalid"
        case .invalidFooter: "the TZif footer is missing or invalid"
        case .invalidPOSIXString: "not a POSIX TZ string"
        }
    }
}
