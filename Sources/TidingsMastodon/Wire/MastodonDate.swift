import Foundation

/// Parses the date forms Mastodon-API servers send: ISO-8601 with or without fractional seconds (and with
/// `Z` or an offset), a bare calendar date (`last_status_at`), or unix seconds as a number or a digit string.
enum MastodonDateParser {
    /// The date `text` names, or nil when it is none of the accepted forms.
    static func parse(_ text: String) -> Date? {
        let text = text.trimmingCharacters(in: .whitespaces)
        if text.isEmpty { return nil }
        if text.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E }), let seconds = Double(text) {
            return Date(timeIntervalSince1970: seconds)
        }
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
        if let date = try? Date.ISO8601FormatStyle().parse(text) { return date }
        if text.utf8.count == 10,
            let date = try? Date.ISO8601FormatStyle().year().month().day().dateSeparator(.dash).parse(text)
        {
            return date
        }
        return nil
    }

    /// The date in the form Mastodon sends (`2022-08-24T22:29:46.493Z`).
    static func format(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}

/// `MastodonDateCoding` decodes a date in any form a Mastodon-API server sends (ISO-8601 with or without
/// fractional seconds, a calendar date, unix seconds) and encodes it as ISO-8601 with milliseconds.
///
/// A missing, null or unreadable date decodes as nil: a date never fails the object that carries it.
@propertyWrapper
public struct MastodonDateCoding: Codable, Hashable, Sendable {
    /// The date, or nil when the server sent none or one that could not be read.
    public var wrappedValue: Date?

    /// Wraps a date.
    public init(wrappedValue: Date?) { self.wrappedValue = wrappedValue }

    /// Decodes any accepted form; anything else is nil rather than an error.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            wrappedValue = nil
        } else if let seconds = try? container.decode(Double.self) {
            wrappedValue = seconds.isFinite ? Date(timeIntervalSince1970: seconds) : nil
        } else if let text = try? container.decode(String.self) {
            wrappedValue = MastodonDateParser.parse(text)
        } else {
            wrappedValue = nil
        }
    }

    /// Encodes ISO-8601 with milliseconds, or null.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue {
            try container.encode(MastodonDateParser.format(wrappedValue))
        } else {
            try container.encodeNil()
        }
    }
}
