import Foundation
import TidingsCore

/// `MastodonWire` decodes server bodies into the wire types, refusing hostile input with a typed error
/// instead of a crash: the body is first parsed by TidingsCore's depth-bounded JSON parser.
public enum MastodonWire {
    /// The deepest nesting a body may have. Real bodies stay under 12 (a boosted status in a notification);
    /// the bound keeps hostile nesting away from the recursive decoders.
    public static let maximumDepth = 64

    /// Decodes one object (`Status`, `Instance`, `Markers`…).
    ///
    /// - Throws: ``MastodonError/decoding`` when the body is not JSON, nests deeper than ``maximumDepth``,
    ///   or lacks what the type requires.
    public static func decode<T: Decodable>(_ type: T.Type, from body: Data, endpoint: String? = nil)
        throws(MastodonError) -> T
    {
        do {
            _ = try JSONValue(parsing: body, maximumDepth: maximumDepth)
        } catch {
            throw .decoding(
                "not JSON within depth \(maximumDepth): \(error.reason) at byte \(error.offset)", endpoint: endpoint)
        }
        do {
            return try JSONDecoder().decode(T.self, from: body)
        } catch {
            throw .decoding("unexpected shape of \(T.self): \(Self.describe(error))", endpoint: endpoint)
        }
    }

    /// Decodes a JSON array one element at a time: malformed elements are skipped and counted, so one
    /// bad status never fails a page.
    ///
    /// - Throws: ``MastodonError/decoding`` when the body is not a JSON array within the depth bound.
    public static func decodeList<T: Decodable>(_ type: T.Type, from body: Data, endpoint: String? = nil)
        throws(MastodonError) -> (elements: [T], skipped: Int)
    {
        let page = try decode(LossyArray<T>.self, from: body, endpoint: endpoint)
        return (page.elements, page.skipped)
    }

    /// The coding path and kind of a decoding failure, without the values (which may be private text).
    static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(type(of: error))" }
        switch error {
        case .keyNotFound(let key, let context):
            return "missing \(key.stringValue) at \(path(context))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "wrong type at \(path(context))"
        @unknown default:
            return "decoding error"
        }
    }

    private static func path(_ context: DecodingError.Context) -> String {
        context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
    }
}
