import Foundation

extension JSONValue: Codable {
    /// Decodes any JSON value; fails only when the decoder holds something that is not JSON.
    ///
    /// A decoder gives no access to a number's spelling: an integer that fits `Int64` becomes `.int`,
    /// one that fits only `UInt64` `.largeInteger`, anything else `.double`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? container.decode(Int64.self) {
            self = .int(number)
        } else if let number = try? container.decode(UInt64.self) {
            self = .largeInteger(String(number))
        } else if let number = try? container.decode(Double.self) {
            self = .double(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let elements = try? container.decode([JSONValue].self) {
            self = .array(elements)
        } else if let members = try? container.decode([String: JSONValue].self) {
            self = .object(members)
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "Not a JSON value.")
        }
    }

    /// Encodes the value; `.binary` as a base64 string, and `.largeInteger` as a `UInt64` when it
    /// fits, else as the nearest `Double` (an `Encoder` cannot take raw digits).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let flag): try container.encode(flag)
        case .int(let number): try container.encode(number)
        case .largeInteger(let digits):
            if let number = UInt64(digits) {
                try container.encode(number)
            } else {
                try container.encode(Double(digits) ?? .nan)
            }
        case .double(let number): try container.encode(number)
        case .string(let text): try container.encode(text)
        case .array(let elements): try container.encode(elements)
        case .object(let members): try container.encode(members)
        case .binary(let bytes): try container.encode(Data(bytes).base64EncodedString())
        }
    }
}

extension JSONValue {
    /// The JSON value of `value` as `encoder` encodes it: a bridge from a `Codable` model to a frame.
    ///
    /// - Throws: the encoder's `EncodingError`, or ``JSONParseError`` if its output nests deeper
    ///   than ``maximumNestingDepth``.
    public init(encoding value: some Encodable, encoder: JSONEncoder = JSONEncoder()) throws {
        self = try JSONValue(parsing: try encoder.encode(value))
    }

    /// Decodes a `Decodable` model from this value, as `decoder` would from its JSON text.
    ///
    /// - Throws: the decoder's `DecodingError` when the value does not have the model's shape.
    public func decode<Model: Decodable>(_ type: Model.Type = Model.self, decoder: JSONDecoder = JSONDecoder())
        throws -> Model
    {
        try decoder.decode(Model.self, from: jsonData())
    }
}
