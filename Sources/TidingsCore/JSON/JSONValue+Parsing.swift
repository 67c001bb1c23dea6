extension JSONValue {
    /// The deepest nesting of arrays and objects that parsing accepts unless told otherwise.
    ///
    /// A bound keeps hostile input from exhausting the stack of the recursive parser.
    public static let maximumNestingDepth = 256

    /// Parses one JSON value from `text`, which may have white space around it.
    ///
    /// - Parameters:
    ///   - text: The JSON text.
    ///   - maximumDepth: The deepest nesting of arrays and objects accepted.
    /// - Throws: ``JSONParseError`` for anything that is not exactly one JSON value, or that nests
    ///   deeper than `maximumDepth`.
    public init(parsing text: String, maximumDepth: Int = JSONValue.maximumNestingDepth) throws(JSONParseError) {
        var text = text
        let result = text.withUTF8 { JSONValue.parse($0, maximumDepth: maximumDepth) }
        self = try result.get()
    }

    /// Parses one JSON value from UTF-8 bytes (invalid UTF-8 in strings becomes U+FFFD).
    ///
    /// - Parameters:
    ///   - bytes: The JSON text as UTF-8.
    ///   - maximumDepth: The deepest nesting of arrays and objects accepted.
    /// - Throws: ``JSONParseError`` for anything that is not exactly one JSON value, or that nests
    ///   deeper than `maximumDepth`.
    public init(parsing bytes: some Collection<UInt8>, maximumDepth: Int = JSONValue.maximumNestingDepth)
        throws(JSONParseError)
    {
        let result =
            bytes.withContiguousStorageIfAvailable { JSONValue.parse($0, maximumDepth: maximumDepth) }
            ?? Array(bytes).withUnsafeBufferPointer { JSONValue.parse($0, maximumDepth: maximumDepth) }
        self = try result.get()
    }

    /// Parses one JSON value from a buffer of UTF-8 bytes, for codecs that already hold one.
    ///
    /// - Throws: ``JSONParseError`` as ``init(parsing:maximumDepth:)-(String,_)`` does.
    public init(parsingUTF8 buffer: UnsafeBufferPointer<UInt8>, maximumDepth: Int = JSONValue.maximumNestingDepth)
        throws(JSONParseError)
    {
        self = try JSONValue.parse(buffer, maximumDepth: maximumDepth).get()
    }

    private static func parse(_ buffer: UnsafeBufferPointer<UInt8>, maximumDepth: Int) -> Result<
        JSONValue, JSONParseError
    > {
        var parser = JSONTextParser(buffer: buffer, maximumDepth: maximumDepth)
        do throws(JSONParseError) {
            parser.skipWhitespace()
            let value = try parser.parseValue(depth: 0)
            parser.skipWhitespace()
            guard parser.index == buffer.count else { throw parser.error("trailing characters after the value") }
            return .success(value)
        } catch {
            return .failure(error)
        }
    }
}
