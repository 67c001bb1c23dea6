import Foundation

/// Why some text is not a JSON value.
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The byte offset in the UTF-8 input where parsing stopped.
    public let offset: Int
    /// What was wrong there.
    public let reason: String

    /// A short explanation with the offset; it never contains the input.
    public var description: String { "JSONParseError(at byte \(offset)): \(reason)" }
}

extension JSONValue {
    /// The deepest nesting of arrays and objects that parsing accepts.
    ///
    /// A bound keeps hostile input from exhausting the stack.
    public static let maximumNestingDepth = 256

    /// Parses one JSON value from `text`, which may have white space around it.
    ///
    /// - Throws: ``JSONParseError`` for anything that is not exactly one JSON value, or nests deeper
    ///   than ``maximumNestingDepth``.
    public init(parsing text: String) throws {
        var text = text
        self = try text.withUTF8 { try JSONValue(parsingUTF8: $0) }
    }

    /// Parses one JSON value from UTF-8 bytes.
    ///
    /// - Throws: ``JSONParseError`` for anything that is not exactly one JSON value.
    public init(parsing bytes: some Collection<UInt8>) throws {
        let result = try bytes.withContiguousStorageIfAvailable { try JSONValue(parsingUTF8: $0) }
        if let result {
            self = result
        } else {
            let copy = Array(bytes)
            self = try copy.withUnsafeBufferPointer { try JSONValue(parsingUTF8: $0) }
        }
    }

    init(parsingUTF8 buffer: UnsafeBufferPointer<UInt8>) throws {
        var parser = JSONTextParser(buffer: buffer)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == buffer.count else { throw parser.error("trailing characters after the value") }
        self = value
    }

    /// The value as compact JSON text; `.binary` becomes a base64 string and non-finite numbers `null`.
    public func jsonString() -> String {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        writeJSON(into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the value as compact JSON UTF-8 to `out`.
    func writeJSON(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let value): out.append(contentsOf: (value ? "true" : "false").utf8)
        case .int(let value): out.append(contentsOf: String(value).utf8)
        case .double(let value):
            if value.isFinite {
                // Swift's shortest round-trip form keeps a fraction or exponent ("100000.0", "1e+16"),
                // so a double parses back as a double, never as an `.int`.
                out.append(contentsOf: "\(value)".utf8)
            } else {
                out.append(contentsOf: "null".utf8)
            }
        case .string(let value): Self.writeString(value, into: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                element.writeJSON(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            var first = true
            for (key, value) in members {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                Self.writeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                value.writeJSON(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        case .binary(let bytes):
            Self.writeString(Data(bytes).base64EncodedString(), into: &out)
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    static func writeString(_ string: String, into out: inout [UInt8]) {
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

/// A recursive-descent JSON parser over UTF-8 bytes with a nesting bound.
struct JSONTextParser {
    let buffer: UnsafeBufferPointer<UInt8>
    var index = 0

    init(buffer: UnsafeBufferPointer<UInt8>) {
        self.buffer = buffer
    }

    func error(_ reason: String) -> JSONParseError {
        JSONParseError(offset: index, reason: reason)
    }

    mutating func skipWhitespace() {
        while index < buffer.count {
            switch buffer[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func parseValue(depth: Int) throws -> JSONValue {
        guard index < buffer.count else { throw error("unexpected end of input") }
        switch buffer[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try parseNumber()
        default:
            throw error("unexpected character")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws {
        let count = literal.utf8CodeUnitCount
        guard buffer.count - index >= count else { throw error("unexpected end of input") }
        let bytes = UnsafeBufferPointer(start: literal.utf8Start, count: count)
        for offset in 0..<count where buffer[index + offset] != bytes[offset] {
            throw error("invalid literal")
        }
        index += count
    }

    private mutating func parseObject(depth: Int) throws -> JSONValue {
        guard depth <= JSONValue.maximumNestingDepth else { throw error("nesting too deep") }
        index += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if index < buffer.count, buffer[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < buffer.count, buffer[index] == UInt8(ascii: "\"") else {
                throw error("expected a string key")
            }
            let key = try parseString()
            skipWhitespace()
            guard index < buffer.count, buffer[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            members[key] = try parseValue(depth: depth)
            skipWhitespace()
            guard index < buffer.count else { throw error("unexpected end of input") }
            if buffer[index] == UInt8(ascii: ",") {
                index += 1
            } else if buffer[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            } else {
                throw error("expected ',' or '}'")
            }
        }
    }

    private mutating func parseArray(depth: Int) throws -> JSONValue {
        guard depth <= JSONValue.maximumNestingDepth else { throw error("nesting too deep") }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < buffer.count, buffer[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            guard index < buffer.count else { throw error("unexpected end of input") }
            if buffer[index] == UInt8(ascii: ",") {
                index += 1
            } else if buffer[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            } else {
                throw error("expected ',' or ']'")
            }
        }
    }

    private mutating func parseString() throws -> String {
        index += 1
        let start = index
        // Fast path: no escapes.
        while index < buffer.count {
            let byte = buffer[index]
            if byte == UInt8(ascii: "\"") {
                let string = String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<index]), as: UTF8.self)
                index += 1
                return string
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("control character in string") }
            index += 1
        }
        var bytes = Array(UnsafeBufferPointer(rebasing: buffer[start..<index]))
        while index < buffer.count {
            let byte = buffer[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return String(decoding: bytes, as: UTF8.self)
            }
            if byte < 0x20 { throw error("control character in string") }
            if byte != UInt8(ascii: "\\") {
                bytes.append(byte)
                index += 1
                continue
            }
            index += 1
            guard index < buffer.count else { break }
            let escape = buffer[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\"))
            case UInt8(ascii: "/"): bytes.append(UInt8(ascii: "/"))
            case UInt8(ascii: "b"): bytes.append(0x08)
            case UInt8(ascii: "f"): bytes.append(0x0C)
            case UInt8(ascii: "n"): bytes.append(0x0A)
            case UInt8(ascii: "r"): bytes.append(0x0D)
            case UInt8(ascii: "t"): bytes.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try parseHex4()
                if (0xD800..<0xDC00).contains(scalar) {
                    // A high surrogate pairs with a following \uDC00-\uDFFF; alone it becomes U+FFFD.
                    if buffer.count - index >= 6, buffer[index] == UInt8(ascii: "\\"),
                        buffer[index + 1] == UInt8(ascii: "u")
                    {
                        let saved = index
                        index += 2
                        let low = try parseHex4()
                        if (0xDC00..<0xE000).contains(low) {
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else {
                            index = saved
                            scalar = 0xFFFD
                        }
                    } else {
                        scalar = 0xFFFD
                    }
                } else if (0xDC00..<0xE000).contains(scalar) {
                    scalar = 0xFFFD
                }
                let unicode = Unicode.Scalar(scalar) ?? "\u{FFFD}"
                bytes.append(contentsOf: String(Character(unicode)).utf8)
            default:
                throw error("invalid escape")
            }
        }
        throw error("unterminated string")
    }

    private mutating func parseHex4() throws -> UInt32 {
        guard buffer.count - index >= 4 else { throw error("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = buffer[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("invalid hex digit")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func parseNumber() throws -> JSONValue {
        let start = index
        var isInteger = true
        if buffer[index] == UInt8(ascii: "-") { index += 1 }
        guard index < buffer.count, isDigit(buffer[index]) else { throw error("invalid number") }
        if buffer[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < buffer.count, isDigit(buffer[index]) { index += 1 }
        }
        if index < buffer.count, buffer[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < buffer.count, isDigit(buffer[index]) else { throw error("invalid fraction") }
            while index < buffer.count, isDigit(buffer[index]) { index += 1 }
        }
        if index < buffer.count, buffer[index] == UInt8(ascii: "e") || buffer[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < buffer.count, buffer[index] == UInt8(ascii: "+") || buffer[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < buffer.count, isDigit(buffer[index]) else { throw error("invalid exponent") }
            while index < buffer.count, isDigit(buffer[index]) { index += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<index]), as: UTF8.self)
        if isInteger, let value = Int(text) { return .int(value) }
        guard let value = Double(text), value.isFinite else { throw error("number out of range") }
        return .double(value)
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }
}
