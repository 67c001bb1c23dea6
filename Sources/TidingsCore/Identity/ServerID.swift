/// A `ServerID` is an identifier a server assigned (a status, a message, a notification), kept as text.
///
/// Ordering is by length, then by the UTF-8 bytes: for decimal Snowflake IDs that is numeric order
/// even when lengths differ (`"99" < "100"`), without ever parsing to an integer, so IDs too large
/// for `Int` or with non-digit characters still sort consistently. The order is a strict total order.
///
/// It decodes from a JSON string or a JSON integer (servers send both) and always encodes as a string.
/// For example:
///
/// ```swift
/// let id: ServerID = "109372890233021"
/// let newer = try JSONDecoder().decode(ServerID.self, from: Data("109372890233022".utf8))
/// // id < newer
/// ```
public struct ServerID: Sendable, Hashable, Comparable, Codable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The identifier exactly as the server sent it (numbers in their decimal spelling).
    public let rawValue: String

    /// Wraps an identifier as the server sent it.
    public init(_ string: String) { rawValue = string }

    public init(stringLiteral value: String) { rawValue = value }

    public static func < (lhs: ServerID, rhs: ServerID) -> Bool {
        let left = lhs.rawValue.utf8
        let right = rhs.rawValue.utf8
        let leftCount = left.count
        let rightCount = right.count
        if leftCount != rightCount { return leftCount < rightCount }
        return left.lexicographicallyPrecedes(right)
    }

    /// Equal when the UTF-8 bytes are equal. String's own `==` treats canonically equivalent
    /// spellings ("é" and "e" + U+0301) as equal, which would break consistency with `<`.
    public static func == (lhs: ServerID, rhs: ServerID) -> Bool {
        lhs.rawValue.utf8.elementsEqual(rhs.rawValue.utf8)
    }

    public func hash(into hasher: inout Hasher) {
        for byte in rawValue.utf8 { hasher.combine(byte) }
        hasher.combine(rawValue.utf8.count)
    }

    public var description: String { rawValue }

    /// Decodes a JSON string, or a JSON integer as its decimal spelling.
    ///
    /// - Throws: `DecodingError.typeMismatch` for anything else (fractions, booleans, objects, null).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let string = try? container.decode(String.self) {
            rawValue = string
        } else if let number = try? container.decode(UInt64.self) {
            rawValue = String(number)
        } else if let number = try? container.decode(Int64.self) {
            rawValue = String(number)
        } else {
            throw DecodingError.typeMismatch(
                ServerID.self,
                DecodingError.Context(
                    codingPath: decoder.codingPath,
                    debugDescription: "a server ID must be a JSON string or integer"))
        }
    }

    /// Encodes as a JSON string, the form every server accepts.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
