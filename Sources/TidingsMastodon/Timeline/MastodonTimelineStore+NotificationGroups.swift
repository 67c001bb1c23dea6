import Foundation
import TidingsCore

/// A grouped notification (v2) as the store holds it: one row per `group_key`, replaced as the group grows.
public struct MastodonStoredNotificationGroup: Sendable, Equatable {
    /// The group's key (the dedupe key).
    public var groupKey: String
    /// The newest notification of the group: the `min_id` of the next poll is the largest of these.
    public var mostRecentID: ServerID
    /// The opaque payload (e.g. the group JSON), opened.
    public var payload: Data

    /// A group `groupKey` whose newest notification is `mostRecentID`.
    public init(groupKey: String, mostRecentID: ServerID, payload: Data) {
        self.groupKey = groupKey
        self.mostRecentID = mostRecentID
        self.payload = payload
    }
}

extension MastodonTimelineStore {
    /// Stores `groups` of `account`, replacing a stored group with the same key unless the stored one is newer
    /// (a stale page never rolls a group back).
    ///
    /// - Returns: How many groups were new or moved forward.
    @discardableResult
    public func storeNotificationGroups(
        _ groups: [MastodonStoredNotificationGroup], account: String, in db: SQLiteConnection
    ) throws -> Int {
        var changed = 0
        for group in groups {
            let stored = try db.fetchOne(
                String.self,
                "SELECT most_recent_id FROM \(MastodonTimelineSchema.notificationGroups) "
                    + "WHERE account = ? AND group_key = ?",
                [account, group.groupKey]
            ).map { ServerID($0) }
            if let stored, stored > group.mostRecentID { continue }
            let rowID = Self.rowKey(account: account, id: "group:" + group.groupKey)
            let sealed: SealedValue
            if let cipher = database.cipher {
                sealed = try cipher.seal(
                    [UInt8](group.payload), table: MastodonTimelineSchema.notificationGroups, column: "payload",
                    rowID: rowID)
            } else {
                sealed = SealedValue(bytes: [UInt8](group.payload))
            }
            try db.execute(
                "INSERT OR REPLACE INTO \(MastodonTimelineSchema.notificationGroups)"
                    + "(account, group_key, most_recent_id, payload, fetched_at) VALUES (?, ?, ?, ?, ?)",
                [account, group.groupKey, group.mostRecentID.rawValue, sealed, nowMillis])
            if stored != group.mostRecentID { changed += 1 }
        }
        return changed
    }

    /// The grouped notifications of `account`, newest first, opened.
    public func notificationGroups(account: String, in db: SQLiteConnection) throws
        -> [MastodonStoredNotificationGroup]
    {
        try db.fetchAll(
            "SELECT group_key, most_recent_id, payload FROM \(MastodonTimelineSchema.notificationGroups) "
                + "WHERE account = ? ORDER BY length(most_recent_id) DESC, most_recent_id DESC",
            [account]
        ) { row in
            let key: String = try row[0]
            let recent: String = try row[1]
            let sealed: SealedValue = try row[2]
            let payload: Data
            if let cipher = database.cipher {
                payload = Data(
                    try cipher.open(
                        sealed, table: MastodonTimelineSchema.notificationGroups, column: "payload",
                        rowID: Self.rowKey(account: account, id: "group:" + key)))
            } else {
                payload = Data(sealed.bytes)
            }
            return MastodonStoredNotificationGroup(groupKey: key, mostRecentID: ServerID(recent), payload: payload)
        }
    }

    /// The newest stored notification ID of `account`, grouped or not: where the next notifications poll
    /// starts (`min_id`).
    public func newestNotificationID(account: String, in db: SQLiteConnection) throws -> ServerID? {
        let single = try db.fetchOne(
            String.self,
            "SELECT notification_id FROM \(MastodonTimelineSchema.notifications) WHERE account = ? "
                + "ORDER BY length(notification_id) DESC, notification_id DESC LIMIT 1",
            [account])
        let grouped = try db.fetchOne(
            String.self,
            "SELECT most_recent_id FROM \(MastodonTimelineSchema.notificationGroups) WHERE account = ? "
                + "ORDER BY length(most_recent_id) DESC, most_recent_id DESC LIMIT 1",
            [account])
        return [single, grouped].compactMap { $0.map { ServerID($0) } }.max()
    }
}
