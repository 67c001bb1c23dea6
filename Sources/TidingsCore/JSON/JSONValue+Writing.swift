import Foundation

extension JSONValue {
    /// The value as compact JSON text; `.binary` becomes a base64 string and non-finite numbers `null`.
    ///
    /// - Parameter sortedKeys: whether object members are written in key order, so that equal values
    ///   always produce equal text (slower: every object's keys are sorted).
    public func jsonString(sortedKeys: Bool = false) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        appendJSON(to: &out, sortedKeys: sortedKeys)
        return String(decoding: out, as: UTF8.self)
    }

    /// The value as compact JSON UTF-8, as ``jsonString(sortedKeys:)`` writes it.
    public func jsonData(sortedKeys: Bool = false) -> Data {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        appendJSON(to: &out, sortedKeys: sortedKeys)
        return Data(out)
    }

    /// Appends the value as compact JSON UTF-8 to `out`, as ``jsonString(sortedKeys:)`` writes it.
    ///
    /// Text written for a value parses back to an equal value: a `.double` always keeps a fraction
    /// or an exponent (`100000.0`, `1e+16`), so it never reads back as an integer.
    public func appendJSON(to out: inout [UInt8], sortedKeys: Bool = false) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let value): out.append(contentsOf: (value ? "true" : "false").utf8)
        case .int(let value): out.append(contentsOf: String(value).utf8)
        case .largeInteger(let digits): out.append(contentsOf: digits.utf8)
        case .double(let value):
            if value.isFinite {
                out.append(contentsOf: "\(value)".utf8)
            } else {
                out.append(contentsOf: "null".utf8)
            }
        case .string(let value): Self.appendString(value, to: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                element.appendJSON(to: &out, sortedKeys: sortedKeys)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            var first = true
            func member(_ key: String, _ value: JSONValue) {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                Self.appendString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                value.appendJSON(to: &out, sortedKeys: sortedKeys)
            }
            if sortedKeys {
                for key in members.keys.sorted() { member(key, members[key, default: .null]) }
            } else {
                for (key, value) in members { member(key, value) }
            }
            out.append(UInt8(ascii: "}"))
        case .binary(let bytes):
            Self.appendString(Data(bytes).base64EncodedString(), to: &out)
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    private static func appendString(_ string: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
