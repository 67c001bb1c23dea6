import TidingsCore

/// Lenient field readers shared by the wire types: a field of the wrong shape reads as absent, so one odd
/// field never fails an event; required fields are checked by the type that needs them.
extension Dictionary where Key == String, Value == JSONValue {
    func omString(_ key: String) -> String? { self[key]?.stringValue }
    func omID(_ key: String) -> String? { self[key]?.identifierValue }
    func omInt(_ key: String) -> Int? {
        guard let value = self[key] else { return nil }
        if let number = value.intValue { return number }
        // Some fields arrive as decimal text; Int(_:) refuses anything that does not fit.
        if let text = value.stringValue { return Int(text) }
        return nil
    }
    func omBool(_ key: String) -> Bool? { self[key]?.boolValue }
    func omObjects(_ key: String) -> [[String: JSONValue]] {
        (self[key]?.arrayValue ?? []).compactMap(\.objectValue)
    }
    /// Whether the key is present with an explicit JSON `null`.
    func omIsNull(_ key: String) -> Bool { self[key]?.isNull ?? false }
}

extension JSONValue {
    /// An object, or the object a JSON string of one encodes (OpenMates sends messages either way).
    var omObjectOrEncodedObject: [String: JSONValue]? {
        if let members = objectValue { return members }
        if let text = stringValue,
            let members = (try? JSONValue(parsing: text, maximumDepth: OpenMatesEnvelope.maximumDepth))?.objectValue
        {
            return members
        }
        return nil
    }
}
