import Foundation
import TidingsCore

/// The answer of `GET api/countries`: country codes and names **in the server's order** (Android
/// decodes it into a `LinkedHashMap`; the picker lists countries in that order).
///
/// A JSON object has no order for `JSONDecoder` or `JSONValue`, so ``init(json:)``
/// parses the object with `JSONValue` (bounded depth, typed errors) and then reads the top-level
/// keys' order from the text itself. Entries whose value is not a string are skipped, a repeated
/// key keeps its first position and its last value (as `JSONValue` does).
public struct CountriesResponse: Sendable, Equatable {
    /// One country: its code (the object's key) and its display name.
    public struct Entry: Sendable, Equatable, Hashable {
        /// The key the server uses for the country (what `login` and `userSearch` send).
        public var code: String
        /// The name to show.
        public var name: String

        /// An entry.
        public init(code: String, name: String) {
            self.code = code
            self.name = name
        }
    }

    /// The countries in the server's order.
    public var entries: [Entry]

    /// Countries in the given order.
    public init(entries: [Entry]) { self.entries = entries }

    /// The name of the country with `code`, if listed.
    public subscript(code: String) -> String? { entries.first { $0.code == code }?.name }

    /// Parses the JSON object `json` keeping its key order.
    ///
    /// - Throws: ``YpChatError/decoding`` when `json` is not a JSON object.
    public init(json: Data) throws(YpChatError) {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: json)
        } catch {
            throw YpChatError(.decoding, operation: "GET api/countries", message: error.description)
        }
        guard let members = value.objectValue else {
            throw YpChatError(.decoding, operation: "GET api/countries", message: "not a JSON object")
        }
        var seen = Set<String>()
        entries = Self.topLevelKeys(of: Array(json)).compactMap { key in
            guard seen.insert(key).inserted, let name = members[key]?.stringValue else { return nil }
            return Entry(code: key, name: name)
        }
    }

    /// The object as JSON with its keys in ``entries``' order.
    public var jsonData: Data {
        var out: [UInt8] = [UInt8(ascii: "{")]
        for (index, entry) in entries.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONValue.string(entry.code).appendJSON(to: &out)
            out.append(UInt8(ascii: ":"))
            JSONValue.string(entry.name).appendJSON(to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return Data(out)
    }

    /// The keys of the outermost object of already validated JSON `bytes`, in text order.
    ///
    /// Why a scan and not a second parser: the text is known to be valid JSON, so a string token at
    /// nesting depth 1 followed by `:` is exactly a key; `JSONValue` decodes its escapes.
    static func topLevelKeys(of bytes: [UInt8]) -> [String] {
        var keys: [String] = []
        var depth = 0
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let start = index
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                let end = min(index + 1, bytes.count)
                index = end
                guard depth == 1 else { continue }
                var next = index
                while next < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[next]) { next += 1 }
                if next < bytes.count, bytes[next] == UInt8(ascii: ":"),
                    let key = (try? JSONValue(parsing: bytes[start..<end]))?.stringValue
                {
                    keys.append(key)
                }
                continue
            }
            if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") { depth += 1 }
            if byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") { depth -= 1 }
            index += 1
        }
        return keys
    }
}
