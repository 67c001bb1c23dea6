import Foundation
import TidingsCore

extension NotificationCandidate {
    /// A candidate from a decrypted Mastodon Web Push payload (content mode): `notification_id`,
    /// `notification_type`, `title`, `body` and `icon`. The payload's title and body are kept as sent (the
    /// server worded them); the policy still decides whether they are shown.
    ///
    /// - Returns: nil when the payload lacks an ID or names a kind the policy never raises.
    public init?(pushPayload payload: JSONValue, account: String) {
        guard let id = payload["notification_id"]?.identifierValue, !id.isEmpty,
            let type = payload["notification_type"]?.stringValue,
            let category = NotificationCategory(type: .init(rawValue: type))
        else { return nil }
        let icon = payload["icon"]?.stringValue.flatMap { $0.isEmpty ? nil : URL(string: $0) }
        self.init(
            account: account, serverID: ServerID(id), category: category, origin: .push,
            author: icon.map { NotificationAuthor(id: nil, displayName: "", handle: "", avatar: $0) },
            statusHTML: Self.html(plainText: payload["body"]?.stringValue ?? ""),
            pushedTitle: payload["title"]?.stringValue)
    }

    /// The payload's body is plain text: escaped, so the HTML-to-text pass gives it back as sent (newlines kept).
    static func html(plainText text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: "\n", with: "<br>")
    }
}
