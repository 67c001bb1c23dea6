import Foundation

/// A JSON value as Socket.IO carries it: any JSON, plus binary blobs that travel as attachments.
///
/// Integers that fit in `Int` stay exact (`.int`), so large chat or message IDs survive a round trip;
/// other numbers are `.double`. Objects keep no key order. `.binary` is not JSON: Socket.IO sends it as
/// a separate attachment with a `{"_placeholder":true,"num":n}` stand-in, and the `Codable` and text
/// encodings render it as a base64 string.
///
/// For example:
/// ```swift
/// let message: JSONValue = ["room": "lobby", "text": "hi", "mentions": [1, 2]]
/// ```
public enum JSONValue: Sendable, Hashable {
    /// JSON `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number written without fraction or exponent that fits in `Int`.
    case int(Int)
    /// Any other finite number.
    case double(Double)
    /// A string.
    case string(String)
    /// An ordered array.
    case array([JSONValue])
    /// An object; key order is not kept.
    case object([String: JSONValue])
    /// Bytes sent as a Socket.IO binary attachment.
    case binary([UInt8])

    /// The string, when this is `.string`.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer, when this is `.int`, or a `.double` with no fraction that fits in `Int`.
    public var intValue: Int? {
        switch self {
        case .int(let value): return value
        case .double(let value):
            guard value.rounded() == value, abs(value) < 9.2e18 else { return nil }
            return Int(value)
        default: return nil
        }
    }

    /// The number as a `Double`, when this is `.int` or `.double`.
    public var doubleValue: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    /// The Boolean, when this is `.bool`.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements, when this is `.array`.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The members, when this is `.object`.
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The bytes, when this is `.binary`.
    public var binaryValue: [UInt8]? {
        if case .binary(let value) = self { return value }
        return nil
    }

    /// The member named `key`, when this is an object that has it.
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
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

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    /// `null`.
    public init(nilLiteral: ()) { self = .null }
    /// A Boolean.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An integer.
    public init(integerLiteral value: Int) { self = .int(value) }
    /// A floating-point number.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An array.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// An object; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue: Codable {
    /// Decodes any JSON value; fails only when the decoder holds something that is not JSON.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else if let value = try? container.decode([String: JSONValue].self) {
            self = .object(value)
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "Not a JSON value.")
        }
    }

    /// Encodes the value; `.binary` is encoded as a base64 string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        case .binary(let value): try container.encode(Data(value).base64EncodedString())
        }
    }
}

extension JSONValue: CustomStringConvertible {
    /// The value as compact JSON text.
    public var description: String { jsonString() }
}
