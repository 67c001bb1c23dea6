import Foundation

/// A JSON value without a fixed schema: the one JSON type of every Tidings protocol.
///
/// Numbers stay exact: an integer written without fraction or exponent is `.int` when it fits
/// `Int64` and `.largeInteger` (its decimal digits as written) when it does not, so large chat or
/// message IDs survive any round trip; every other number is `.double`. Numbers compare by value,
/// so `.int(42) == .double(42)`: a server that writes `42.0` means the same as one that writes `42`.
/// Objects keep no member order. `.binary` is not JSON: Socket.IO carries it as a separate
/// attachment, and the text and `Codable` forms render it as a base64 string.
///
/// For example:
/// ```swift
/// let message: JSONValue = ["room": "lobby", "text": "hi", "mentions": [1, 2]]
/// ```
public enum JSONValue: Sendable {
    /// JSON `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number written without fraction or exponent that fits in `Int64`.
    case int(Int64)
    /// An integer outside `Int64`, as its canonical decimal digits (an optional `-`, no leading zeros).
    ///
    /// The parser produces it only for integers that do not fit `.int`; build one the same way, so
    /// that equal numbers compare equal.
    case largeInteger(String)
    /// Any other finite number.
    case double(Double)
    /// A string.
    case string(String)
    /// An ordered array.
    case array([JSONValue])
    /// An object; member order is not kept.
    case object([String: JSONValue])
    /// Bytes sent as a Socket.IO binary attachment; base64 text in JSON.
    case binary([UInt8])
}

extension JSONValue {
    /// The member named `key`, when this is an object that has it.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The string, when this is `.string`.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// A non-empty string, or a whole number as its decimal text: IDs arrive either way.
    ///
    /// A `.double` counts only when it is whole and below 10^15, where a double still holds every
    /// integer exactly.
    public var identifierValue: String? {
        switch self {
        case .string(let text): return text.isEmpty ? nil : text
        case .int(let number): return String(number)
        case .largeInteger(let digits): return digits
        case .double(let number) where number.rounded() == number && abs(number) < 1e15:
            return String(Int64(number))
        default: return nil
        }
    }

    /// The number as an `Int`, from `.int` or a whole `.double`, when it fits exactly.
    public var intValue: Int? {
        switch self {
        case .int(let number): return Int(exactly: number)
        case .double(let number): return Int(exactly: number)
        default: return nil
        }
    }

    /// The number as a `Double` (rounded to the nearest one for integers beyond 2^53).
    public var doubleValue: Double? {
        switch self {
        case .int(let number): return Double(number)
        case .double(let number): return number
        case .largeInteger(let digits): return Double(digits)
        default: return nil
        }
    }

    /// The Boolean, also from a number that is exactly 0 or 1, as some servers send it.
    public var boolValue: Bool? {
        switch self {
        case .bool(let flag): return flag
        case .int(let number) where number == 0 || number == 1: return number == 1
        case .double(let number) where number == 0 || number == 1: return number == 1
        default: return nil
        }
    }

    /// The elements, when this is `.array`.
    public var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The members, when this is `.object`.
    public var objectValue: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// The bytes, when this is `.binary`.
    public var binaryValue: [UInt8]? {
        if case .binary(let bytes) = self { return bytes }
        return nil
    }

    /// Whether the value is JSON `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// Whether a `.binary` value occurs anywhere inside this value.
    public var containsBinary: Bool {
        switch self {
        case .binary: return true
        case .array(let elements): return elements.contains { $0.containsBinary }
        case .object(let members): return members.values.contains { $0.containsBinary }
        default: return false
        }
    }
}

extension JSONValue: Hashable {
    /// Equal values have equal meaning: numbers compare by value (`.int(1) == .double(1.0)`),
    /// objects regardless of member order.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let left), .bool(let right)): return left == right
        case (.int(let left), .int(let right)): return left == right
        case (.double(let left), .double(let right)): return left == right
        case (.int(let whole), .double(let number)), (.double(let number), .int(let whole)):
            return Int64(exactly: number) == whole
        case (.largeInteger(let left), .largeInteger(let right)): return left == right
        case (.string(let left), .string(let right)): return left == right
        case (.array(let left), .array(let right)): return left == right
        case (.object(let left), .object(let right)): return left == right
        case (.binary(let left), .binary(let right)): return left == right
        default: return false
        }
    }

    /// Hashes consistently with `==`: a whole double hashes as the integer it equals.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0 as UInt8)
        case .bool(let flag):
            hasher.combine(1 as UInt8)
            hasher.combine(flag)
        case .int(let number):
            hasher.combine(2 as UInt8)
            hasher.combine(number)
        case .double(let number):
            if let whole = Int64(exactly: number) {
                hasher.combine(2 as UInt8)
                hasher.combine(whole)
            } else {
                hasher.combine(3 as UInt8)
                hasher.combine(number)
            }
        case .largeInteger(let digits):
            hasher.combine(4 as UInt8)
            hasher.combine(digits)
        case .string(let text):
            hasher.combine(5 as UInt8)
            hasher.combine(text)
        case .array(let elements):
            hasher.combine(6 as UInt8)
            hasher.combine(elements)
        case .object(let members):
            hasher.combine(7 as UInt8)
            hasher.combine(members)
        case .binary(let bytes):
            hasher.combine(8 as UInt8)
            hasher.combine(bytes)
        }
    }
}

extension JSONValue: CustomStringConvertible {
    /// The value as compact JSON text.
    public var description: String { jsonString() }
}
