/// A coding key of any name, so a DTO can read the first of several spellings a server uses.
struct AnyCodingKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension KeyedDecodingContainer where Key == AnyCodingKey {
    /// The first of `names` present with a string (or a number, as text); nil when none is.
    ///
    /// Why: the plan has no public server source, so a field's spelling and JSON type are read
    /// leniently instead of failing the whole payload.
    func text(_ names: String...) -> String? {
        for name in names {
            let key = AnyCodingKey(name)
            if let value = try? decodeIfPresent(String.self, forKey: key) { return value }
            if let value = try? decodeIfPresent(Int64.self, forKey: key) { return String(value) }
        }
        return nil
    }

    /// The first of `names` present as a boolean (or 0/1); nil when none is.
    func flag(_ names: String...) -> Bool? {
        for name in names {
            let key = AnyCodingKey(name)
            if let value = try? decodeIfPresent(Bool.self, forKey: key) { return value }
            if let value = try? decodeIfPresent(Int.self, forKey: key), value == 0 || value == 1 { return value == 1 }
        }
        return nil
    }
}
