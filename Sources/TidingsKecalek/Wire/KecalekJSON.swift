import Foundation

/// A JSON value as Kecalek frames carry it, decoded without a fixed schema.
///
/// Wire decoding goes through this type so that one odd field (a number where a string was
/// expected, a missing key) is handled per field instead of failing the whole frame.
public enum KecalekJSON: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number without fraction or exponent that fits 64 bits.
    case int(Int64)
    /// Any other number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([KecalekJSON])
    /// An object; member order is not kept.
    case object([String: KecalekJSON])

    /// The member `key` of an object, or nil for a missing key or a non-object.
    public subscript(key: String) -> KecalekJSON? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The string, or nil when the value is not a string.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// A string, or a whole number written as its decimal text: IDs arrive either way.
    public var identifierValue: String? {
        switch self {
        case .string(let text): return text.isEmpty ? nil : text
        case .int(let number): return String(number)
        case .double(let number) where number.rounded() == number && abs(number) < 1e15:
            return String(Int64(number))
        default: return nil
        }
    }

    /// A whole number, from an integer or an integral double.
    public var intValue: Int? {
        switch self {
        case .int(let number): return Int(exactly: number)
        case .double(let number): return Int(exactly: number)
        default: return nil
        }
    }

    /// A boolean, also from 0/1 as some servers send it.
    public var boolValue: Bool? {
        switch self {
        case .bool(let flag): return flag
        case .int(let number) where number == 0 || number == 1: return number == 1
        default: return nil
        }
    }

    /// The elements of an array, or nil for a non-array.
    public var arrayValue: [KecalekJSON]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The members of an object, or nil for a non-object.
    public var objectValue: [String: KecalekJSON]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// Whether the value is JSON `null`.
    public var isNull: Bool { self == .null }

    /// Parses one JSON text.
    ///
    /// - Throws: ``KecalekError/malformedFrame`` when `data` is not JSON.
    public static func parse(_ data: Data) throws -> KecalekJSON {
        do {
            return try JSONDecoder().decode(KecalekJSON.self, from: data)
        } catch {
            throw KecalekError.malformedFrame("not JSON (\(data.count) bytes)")
        }
    }

    /// The compact JSON text of the value, with keys sorted so equal values encode equally.
    public func encoded() -> Data {
        var text = ""
        write(into: &text)
        return Data(text.utf8)
    }

    private func write(into text: inout String) {
        switch self {
        case .null: text += "null"
        case .bool(let flag): text += flag ? "true" : "false"
        case .int(let number): text += String(number)
        case .double(let number):
            text += number.isFinite ? "\(number)" : "null"
        case .string(let value): Self.writeString(value, into: &text)
        case .array(let elements):
            text += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { text += "," }
                element.write(into: &text)
            }
            text += "]"
        case .object(let members):
            text += "{"
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { text += "," }
                Self.writeString(key, into: &text)
                text += ":"
                members[key, default: .null].write(into: &text)
            }
            text += "}"
        }
    }

    private static func writeString(_ value: String, into text: inout String) {
        text += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}

extension KecalekJSON: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? container.decode(Int64.self) {
            self = .int(number)
        } else if let number = try? container.decode(Double.self) {
            // A fraction below double precision ("555555555555555555.25") reads as an integral double, whose
            // own text would read back as an integer: store it as one, so parsing is stable across re-encoding.
            if let whole = Int64(exactly: number) {
                self = .int(whole)
            } else {
                self = .double(number)
            }
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let elements = try? container.decode([KecalekJSON].self) {
            self = .array(elements)
        } else {
            self = .object(try container.decode([String: KecalekJSON].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let flag): try container.encode(flag)
        case .int(let number): try container.encode(number)
        case .double(let number): try container.encode(number)
        case .string(let text): try container.encode(text)
        case .array(let elements): try container.encode(elements)
        case .object(let members): try container.encode(members)
        }
    }
}

extension KecalekJSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: KecalekJSON...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, KecalekJSON)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    public init(nilLiteral: ()) { self = .null }
}
