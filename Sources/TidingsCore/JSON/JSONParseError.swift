/// Why some bytes are not a JSON value.
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The byte offset in the UTF-8 input where parsing stopped.
    public let offset: Int
    /// What was wrong there.
    public let reason: String

    /// Creates an error at `offset`.
    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    /// A short explanation with the offset; it never contains the input, which may be secret.
    public var description: String { "JSONParseError(at byte \(offset)): \(reason)" }
}
