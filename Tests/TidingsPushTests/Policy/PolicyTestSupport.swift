import Foundation
import TidingsCore
import TidingsMastodon
import TidingsPush

/// Builders shared by the policy tests: candidates, contexts, stores and Berlin wall-clock dates.
enum PolicyTestSupport {
    static let account = "alice@example.social"
    static let berlin = TimeZone(identifier: "Europe/Berlin")!
    static let newYork = TimeZone(identifier: "America/New_York")!

    /// A date from local wall-clock parts in `zone`.
    static func date(
        _ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int = 0, in zone: TimeZone = berlin
    ) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute))!
    }

    static func candidate(
        _ id: ServerID, _ category: NotificationCategory = .mention, origin: NotificationOrigin = .poll,
        group: String? = nil, count: Int = 1, followed: Bool = false, visibility: MastodonVisibility? = .public,
        html: String = "<p>Hello</p>"
    ) -> NotificationCandidate {
        NotificationCandidate(
            account: account, serverID: id, category: category, origin: origin, groupKey: group, groupCount: count,
            author: NotificationAuthor(
                id: "42", displayName: "Bob", handle: "bob@other.example", avatar: URL(string: "https://cdn/bob.png"),
                isFollowed: followed),
            statusID: "900", statusHTML: html, visibility: visibility)
    }

    static func context(
        _ now: Date, zone: TimeZone = berlin, marker: ServerID? = nil,
        content: NotificationContentContext = .init(accountHandle: "alice@example.social")
    ) -> NotificationPolicyContext {
        NotificationPolicyContext(now: now, timeZone: zone, marker: marker, content: content)
    }

    static func store() throws -> NotificationPolicyStore {
        NotificationPolicyStore(database: try SQLiteDatabase.inMemory(schema: NotificationPolicyStore.schema))
    }

    /// A fresh directory under the temporary directory.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("policy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Decodes a wire type from JSON text.
    static func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try MastodonWire.decode(T.self, from: Data(json.utf8))
    }
}

extension NotificationDecision {
    /// The decision's kind, for compact expectations.
    var label: String {
        switch self {
        case .raise: "raise"
        case .update: "update"
        case .hold(_, let reason): "hold.\(reason.rawValue)"
        case .drop(let reason): "drop.\(reason.rawValue)"
        }
    }

    var heldUntil: Date? { if case .hold(let until, _) = self { until } else { nil } }
}
