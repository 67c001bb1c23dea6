import Foundation
import TidingsCore

/// A page of wire objects decoded one element at a time: an element that does not decode is skipped
/// and counted, so one malformed status never loses the other 39 of a page.
struct LossyArray<Element: Decodable>: Decodable {
    var elements: [Element] = []
    var skipped = 0

    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        while !container.isAtEnd {
            if let element = try? container.decode(Element.self) {
                elements.append(element)
            } else {
                // A failed decode does not move the cursor; consuming any JSON value does.
                _ = try container.decode(JSONValue.self)
                skipped += 1
            }
        }
    }
}

extension KeyedDecodingContainer {
    /// The value under `key`, or nil when it is missing, null or of another shape: an optional field of
    /// a wire type never fails the object.
    func lenient<T: Decodable>(_ type: T.Type, _ key: Key) -> T? {
        (try? decodeIfPresent(T.self, forKey: key)) ?? nil
    }

    /// The array under `key` with its malformed elements skipped; empty when missing, null or not an array.
    func lossyArray<T: Decodable>(_ type: T.Type, _ key: Key) -> [T] {
        lenient(LossyArray<T>.self, key)?.elements ?? []
    }

    /// A date in any accepted form, or nil.
    func date(_ key: Key) -> MastodonDateCoding {
        MastodonDateCoding(wrappedValue: lenient(MastodonDateCoding.self, key)?.wrappedValue)
    }

    /// A URL, or nil when missing, null, empty (Mastodon's "no image") or unparsable.
    func url(_ key: Key) -> URL? {
        guard let text = lenient(String.self, key), !text.isEmpty else { return nil }
        return URL(string: text)
    }
}
