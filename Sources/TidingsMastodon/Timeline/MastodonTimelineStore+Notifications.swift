import Foundation
import TidingsCore

/// A notification as the store holds it.
public struct MastodonStoredNotification: Sendable, Equatable {
    /// The server's notification ID (the dedupe key).
    public var id: ServerID
    /// The status it is about, when it is about one; that status is then not an orphan.
    public var statusID: ServerID?
    /// The opaque payload (e.g. the notification JSON), opened.
    public var payload: Data

    /// A notification `id` about `statusID`.
    public init(id: ServerID, statusID: ServerID? = nil, payload: Data) {
        self.id = id
        self.statusID = statusID
        self.payload = payload
    }
}

extension MastodonTimelineStore {
    /// Stores `notifications` of `account`, replacing any with the same server ID (so a refetch or a repeated
    /// push never duplicates one).
    ///
    /// - Returns: How many were new.
    @discardableResult
    public func storeNotifications(
        _ notifications: [MastodonStoredNotification], account: String, in db: SQLiteConnection
    ) throws -> Int {
        var added = 0
        for notification in notifications {
            let exists =
                try db.fetchOne(
                    Int64.self,
                    "SELECT 1 FROM \(MastodonTimelineSchema.notifications) WHERE account = ? AND notification_id = ?",
                    [account, notification.id.rawValue]) != nil
            let sealed: SealedValue
            if let cipher = database.cipher {
                sealed = try cipher.seal(
                    [UInt8](notification.payload), table: MastodonTimelineSchema.notifications, column: "payload",
                    rowID: Self.rowKey(account: account, id: notification.id.rawValue))
            } else {
                sealed = SealedValue(bytes: [UInt8](notification.payload))
            }
            try db.execute(
                "INSERT INTO \(MastodonTimelineSchema.notifications)(account, notification_id, status_id, payload, "
                    + "fetched_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT(account, notification_id) DO UPDATE SET "
                    + "status_id = excluded.status_id, payload = excluded.payload, fetched_at = excluded.fetched_at",
                [account, notification.id.rawValue, notification.statusID?.rawValue, sealed, nowMillis])
            if !exists { added += 1 }
        }
        return added
    }

    /// ``storeNotifications(_:account:in:)`` in one transaction on the store's queue.
    @discardableResult
    public func storeNotifications(_ notifications: [MastodonStoredNotification], account: String) async throws -> Int {
        try await database.write { db in try self.storeNotifications(notifications, account: account, in: db) }
    }

    /// The notifications of `account`, newest server ID first, opened.
    public func notifications(account: String, in db: SQLiteConnection) throws -> [MastodonStoredNotification] {
        try db.fetchAll(
            "SELECT notification_id, status_id, payload FROM \(MastodonTimelineSchema.notifications) "
                + "WHERE account = ? ORDER BY length(notification_id) DESC, notification_id DESC",
            [account]
        ) { row in
            let id: String = try row[0]
            let status: String? = try row[1]
            let sealed: SealedValue = try row[2]
            let payload: Data
            if let cipher = database.cipher {
                payload = Data(
                    try cipher.open(
                        sealed, table: MastodonTimelineSchema.notifications, column: "payload",
                        rowID: Self.rowKey(account: account, id: id)))
            } else {
                payload = Data(sealed.bytes)
            }
            return MastodonStoredNotification(id: ServerID(id), statusID: status.map { ServerID($0) }, payload: payload)
        }
    }

    /// ``notifications(account:in:)`` on the store's queue.
    public func notifications(account: String) async throws -> [MastodonStoredNotification] {
        try await database.read { db in try self.notifications(account: account, in: db) }
    }
}
