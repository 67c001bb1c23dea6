import Foundation
import TidingsCore

/// `NotificationPolicyStore` keeps the policy's small durable state in the app's store: the raised set per
/// account (notification IDs, and each v2 group's newest raised ID and request identifier), when each
/// account's last digest went out, and whether the notification permission was asked.
///
/// Add ``tables`` to the schema and call ``createTables(_:)`` from a migration. Deciding and recording happen in
/// one write transaction (``decideAndRecord(_:settings:context:)``), so the app and its notification extension,
/// sharing the file, never both raise one notification. Nothing of a held notification is stored: at the end
/// of quiet hours or at a digest time the caller feeds the server's unread list again.
public final class NotificationPolicyStore: Sendable {
    /// The durable tables (raised set, groups, per-account and global state).
    public static let tables: [SQLiteSchema.Table] = [
        .durable("tidings_raised_notifications"), .durable("tidings_raised_groups"),
        .durable("tidings_notification_state"),
    ]

    /// Creates the tables; call it from one of the schema's migrations.
    ///
    /// - Throws: `StoreError` from SQLite.
    public static func createTables(_ db: SQLiteConnection) throws {
        try db.executeScript(
            """
            CREATE TABLE IF NOT EXISTS tidings_raised_notifications(
                account TEXT NOT NULL, server_id TEXT NOT NULL, request_id TEXT NOT NULL, raised_at REAL NOT NULL,
                PRIMARY KEY(account, server_id)) STRICT;
            CREATE TABLE IF NOT EXISTS tidings_raised_groups(
                account TEXT NOT NULL, group_key TEXT NOT NULL, request_id TEXT NOT NULL, newest_id TEXT NOT NULL,
                PRIMARY KEY(account, group_key)) STRICT;
            CREATE TABLE IF NOT EXISTS tidings_notification_state(
                account TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY(account, key)) STRICT;
            """)
    }

    /// A schema holding only these tables, for a store of its own (tests, an extension's small store).
    public static let schema = SQLiteSchema(
        tables: tables, migrations: [.init(version: 1, name: "notification policy") { try createTables($0) }])

    let database: SQLiteDatabase

    /// Uses `database`, whose schema must include ``tables``.
    public init(database: SQLiteDatabase) { self.database = database }

    /// Decides with ``NotificationPolicy`` against the stored raised set and records a raise or an update in the
    /// same transaction.
    ///
    /// - Throws: `StoreError` from SQLite; nothing is recorded then.
    public func decideAndRecord(
        _ candidate: NotificationCandidate, settings: NotificationSettings, context: NotificationPolicyContext
    ) async throws -> NotificationDecision {
        try await decideAndRecordSuperseding(candidate, settings: settings, context: context).decision
    }

    /// ``decideAndRecord(_:settings:context:)``, also naming the notification the decision supersedes: a push shown
    /// beside its group (a provisional push group, ``provisionalGroupPrefix(_:)``) that the recorded group's update
    /// now holds. Its rows move to the group's request identifier in the same transaction, so it is named once; the
    /// caller withdraws it.
    ///
    /// - Throws: `StoreError` from SQLite; nothing is recorded then.
    func decideAndRecordSuperseding(
        _ candidate: NotificationCandidate, settings: NotificationSettings, context: NotificationPolicyContext
    ) async throws -> (decision: NotificationDecision, superseded: String?) {
        try await database.write { db in
            let (raised, groupRecorded) = try Self.groupState(db, candidate)
            let decision = NotificationPolicy.decide(candidate, settings: settings, context: context, raised: raised)
            var superseded: String?
            switch decision {
            case .update(let request) where raised.besideGroup != nil:
                superseded = raised.besideGroup
                for table in ["tidings_raised_notifications", "tidings_raised_groups"] {
                    try db.execute(
                        "UPDATE \(table) SET request_id = ? WHERE account = ? AND request_id = ?",
                        [request.identifier, candidate.account, raised.besideGroup])
                }
                try Self.record(db, candidate, requestID: request.identifier, at: context.now)
            case .raise(let request), .update(let request):
                try Self.record(db, candidate, requestID: request.identifier, at: context.now)
            case .drop(.alreadyRaised) where !groupRecorded && candidate.groupKey != nil:
                // Shown before its group was seen (a push): the group grows that notification in place. One in a
                // digest summary or dismissed was not shown on its own: its group is left to be shown as its own.
                if let requestID = raised.group?.requestIdentifier {
                    try Self.recordGroup(db, candidate, requestID: requestID)
                }
            case .hold where settings.isDigest:
                // The first hold starts the digest's count (when no delivery did yet), so the first digest time
                // after it delivers: otherwise an app's first digest job would only start the count.
                try db.execute(
                    "INSERT OR IGNORE INTO tidings_notification_state(account, key, value) VALUES (?, ?, ?)",
                    [candidate.account, Self.lastDigestKey, String(context.now.timeIntervalSince1970)])
            case .hold, .drop: break
            }
            return (decision, superseded)
        }
    }

    /// What the raised set holds for `candidate`.
    ///
    /// - Throws: `StoreError` from SQLite.
    public func raisedState(for candidate: NotificationCandidate) async throws -> RaisedState {
        try await database.read { db in try Self.groupState(db, candidate).state }
    }

    /// The keys of the account's recorded groups that start with `prefix` (a push's provisional groups, to
    /// continue one as Mastodon continues a group's hour bucket).
    ///
    /// - Throws: `StoreError` from SQLite.
    public func groupKeys(account: String, prefix: String) async throws -> [String] {
        try await database.read { db in
            try db.fetchAll(
                String.self,
                "SELECT group_key FROM tidings_raised_groups WHERE account = ? AND substr(group_key, 1, length(?)) = ?",
                [account, prefix, prefix])
        }
    }

    /// The outcome of ``deliverDigestIfDue(account:unread:settings:context:)``.
    public enum DigestOutcome: Hashable, Sendable {
        /// No digest time passed since the last delivery.
        case notDue
        /// A digest time passed, but nothing unread and unraised was left.
        case nothingToSay
        /// Raise this summary.
        case raise(NotificationRequest)
    }

    /// Delivers the account's digest when a digest time passed since the last one (a job that runs late still
    /// delivers): one summary of `unread` — what the server still lists as unread — less what the marker covers,
    /// the switched-off categories, what was raised already and, when the setting lets them come at once, private
    /// mentions and mentions from followed accounts (the decision raises those on their own). Records the summary's
    /// notification IDs in the raised set and the delivery time. The digest's count starts at the account's first
    /// hold while the digest is on (``decideAndRecord(_:settings:context:)``), so the first digest time after it
    /// delivers; a call before anything was held records the time and delivers nothing: the digest starts then.
    ///
    /// - Throws: `StoreError` from SQLite; nothing is recorded then.
    public func deliverDigestIfDue(
        account: String, unread: [NotificationCandidate], settings: NotificationSettings,
        context: NotificationPolicyContext
    ) async throws -> DigestOutcome {
        try await database.write { db in
            let calendar = NotificationCalendar(zone: context.zone)
            let stored = try db.fetchOne(
                String.self, "SELECT value FROM tidings_notification_state WHERE account = ? AND key = ?",
                [account, Self.lastDigestKey])
            let recordNow = {
                try db.execute(
                    "INSERT OR REPLACE INTO tidings_notification_state(account, key, value) VALUES (?, ?, ?)",
                    [account, Self.lastDigestKey, String(context.now.timeIntervalSince1970)])
            }
            // Nothing held and no delivery yet: this call only starts the count (a digest covers times after it
            // was first asked for).
            guard let last = stored.flatMap(Double.init).map(Date.init(timeIntervalSince1970:)) else {
                try recordNow()
                return .notDue
            }
            guard calendar.isDigestDue(now: context.now, lastDelivered: last, settings: settings),
                !calendar.isQuiet(context.now, settings.quietHours)
            else { return .notDue }
            try recordNow()
            var fresh: [NotificationCandidate] = []
            for candidate in unread where candidate.account == account {
                // What may come at once is raised on its own by the decision that follows, not summarised.
                if case .digest(_, true) = settings.delivery, candidate.isUrgentMention { continue }
                guard settings.enabledCategories.contains(candidate.category),
                    context.marker.map({ candidate.serverID > $0 }) ?? true,
                    try !Self.raisedState(db, candidate).notificationRaised
                else { continue }
                if let group = try Self.raisedState(db, candidate).group, group.newest >= candidate.serverID {
                    continue
                }
                fresh.append(candidate)
            }
            guard
                let summary = NotificationContentBuilder.digest(
                    account: account, candidates: fresh, context: context.content)
            else { return .nothingToSay }
            for candidate in fresh { try Self.record(db, candidate, requestID: summary.identifier, at: context.now) }
            return .raise(summary)
        }
    }

    /// What the app must do when an account signs out: withdraw these notifications, remove this channel group.
    public struct SignOut: Hashable, Sendable {
        /// The request identifiers raised for the account (withdraw every one).
        public var withdrawRequestIdentifiers: [String]
        /// The Android channel group to remove (the account's).
        public var removeChannelGroup: String
    }

    /// Deletes the account's raised set and state, and returns what the app must withdraw (what was raised, and
    /// what was recorded as shown outside the raised set: the generic notification).
    ///
    /// - Throws: `StoreError` from SQLite; nothing is deleted then.
    public func signOut(account: String) async throws -> SignOut {
        try await database.write { db in
            let notifications = try db.fetchAll(
                String.self, "SELECT DISTINCT request_id FROM tidings_raised_notifications WHERE account = ?",
                [account])
            let groups = try db.fetchAll(
                String.self, "SELECT DISTINCT request_id FROM tidings_raised_groups WHERE account = ?", [account])
            let shown = try Self.shownIdentifiers(db, account: account)
            for table in ["tidings_raised_notifications", "tidings_raised_groups", "tidings_notification_state"] {
                try db.execute("DELETE FROM \(table) WHERE account = ?", [account])
            }
            let dismissed = Self.dismissedIdentifier(account: account)
            let identifiers = Array(Set(notifications + groups + shown).subtracting([dismissed])).sorted()
            return SignOut(withdrawRequestIdentifiers: identifiers, removeChannelGroup: account)
        }
    }

    /// Whether the app already asked for the notification permission (then it sends the person to the system
    /// settings instead).
    ///
    /// - Throws: `StoreError` from SQLite.
    public func permissionWasAsked() async throws -> Bool {
        try await database.read { db in
            try db.fetchOne(
                String.self, "SELECT value FROM tidings_notification_state WHERE account = '' AND key = ?",
                ["permission_asked"]) == "1"
        }
    }

    /// Records that the permission was asked.
    ///
    /// - Throws: `StoreError` from SQLite.
    public func markPermissionAsked() async throws {
        try await database.write { db in
            try db.execute(
                "INSERT OR REPLACE INTO tidings_notification_state(account, key, value) VALUES ('', ?, '1')",
                ["permission_asked"])
        }
    }

    /// The state key of an account's last digest delivery (or the start of its count).
    static let lastDigestKey = "last_digest"

    private static func raisedState(_ db: SQLiteConnection, _ candidate: NotificationCandidate) throws
        -> RaisedState
    {
        try groupState(db, candidate).state
    }

    /// What the raised set holds for `candidate`, and whether its group itself is recorded. A group not
    /// recorded yet adopts the request identifier under which one of its notifications was shown on its own:
    /// its newest notification's, or else the one provisional push group (``provisionalGroupPrefix``) of its
    /// kind among its notifications (`oldestMemberID`…`serverID`) — so a push shown before the poll saw its
    /// group is grown in place, never doubled.
    private static func groupState(_ db: SQLiteConnection, _ candidate: NotificationCandidate) throws
        -> (state: RaisedState, recorded: Bool)
    {
        let ownRequest = try db.fetchOne(
            String.self,
            "SELECT request_id FROM tidings_raised_notifications WHERE account = ? AND server_id = ?",
            [candidate.account, candidate.serverID])
        guard let key = candidate.groupKey else { return (RaisedState(notificationRaised: ownRequest != nil), false) }
        if let group = try db.fetchOne(
            "SELECT newest_id, request_id FROM tidings_raised_groups WHERE account = ? AND group_key = ?",
            [candidate.account, key],
            { row in (newest: try row[0] as ServerID, requestIdentifier: try row[1] as String) })
        {
            // Its newest notification shown beside it, by a push not matched to it: the group grows to hold it.
            let provisional = "\(candidate.account)#group:push-"
            if let ownRequest, ownRequest != group.requestIdentifier, ownRequest.hasPrefix(provisional),
                group.newest < candidate.serverID
            {
                var state = RaisedState(group: group)
                state.besideGroup = ownRequest
                return (state, true)
            }
            return (RaisedState(notificationRaised: ownRequest != nil, group: group), true)
        }
        // A digest summary is not a notification of this group, nor is a dismissed one shown: the group is then shown
        // as a notification of its own.
        if let ownRequest, ownRequest != "\(candidate.account)#digest",
            ownRequest != dismissedIdentifier(account: candidate.account)
        {
            return (RaisedState(notificationRaised: true, group: (candidate.serverID, ownRequest)), false)
        }
        if ownRequest != nil { return (RaisedState(notificationRaised: true), false) }
        let prefix = "\(candidate.account)#group:\(provisionalGroupPrefix(candidate.category))"
        let oldest = candidate.oldestMemberID ?? candidate.serverID
        let members = try db.fetchAll(
            """
            SELECT server_id, request_id FROM tidings_raised_notifications
            WHERE account = ? AND substr(request_id, 1, length(?)) = ?
            """, [candidate.account, prefix, prefix]
        ) { row in (id: try row[0] as ServerID, request: try row[1] as String) }
        .filter { $0.id >= oldest && $0.id <= candidate.serverID }
        guard let request = members.first?.request, members.allSatisfy({ $0.request == request }),
            let newest = members.map(\.id).max()
        else { return (RaisedState(), false) }
        return (RaisedState(group: (newest, request)), false)
    }

    /// The start of the group key a content-mode push of `category` is shown under before any poll saw its
    /// group (`push-favourite-`): a push names no group, so the glue derives one as Mastodon does, from what
    /// the payload says.
    public static func provisionalGroupPrefix(_ category: NotificationCategory) -> String {
        "push-\(category.rawValue)-"
    }

    private static func record(
        _ db: SQLiteConnection, _ candidate: NotificationCandidate, requestID: String, at now: Date
    )
        throws
    {
        try db.execute(
            """
            INSERT OR IGNORE INTO tidings_raised_notifications(account, server_id, request_id, raised_at)
            VALUES (?, ?, ?, ?)
            """, [candidate.account, candidate.serverID, requestID, now.timeIntervalSince1970])
        if candidate.groupKey != nil { try recordGroup(db, candidate, requestID: requestID) }
    }

    private static func recordGroup(_ db: SQLiteConnection, _ candidate: NotificationCandidate, requestID: String)
        throws
    {
        guard let key = candidate.groupKey else { return }
        // The newest ID only moves forward, in ServerID order (byte length, then bytes), as markers do.
        try db.execute(
            """
            INSERT INTO tidings_raised_groups(account, group_key, request_id, newest_id) VALUES (?, ?, ?, ?)
            ON CONFLICT(account, group_key) DO UPDATE SET newest_id = excluded.newest_id
            WHERE length(CAST(excluded.newest_id AS BLOB)) > length(CAST(newest_id AS BLOB))
               OR (length(CAST(excluded.newest_id AS BLOB)) = length(CAST(newest_id AS BLOB))
                   AND excluded.newest_id > newest_id)
            """, [candidate.account, key, requestID, candidate.serverID])
    }
}

extension NotificationPolicyStore {
    /// The request identifier notification `serverID` of `account` was raised under (as
    /// ``raisedRequestIdentifier(account:serverID:)``) and when that request was last raised or updated; nil when
    /// it was not raised. What tells a Nextcloud push which notification, raised by another path just before it
    /// arrived, it may announce.
    ///
    /// - Throws: `StoreError` from SQLite.
    public func raisedRecord(account: String, serverID: ServerID) async throws -> (
        requestIdentifier: String, raisedAt: Date
    )? {
        guard let identifier = try await raisedRequestIdentifier(account: account, serverID: serverID) else {
            return nil
        }
        let seconds = try await database.read { db in
            try db.fetchOne(
                Double.self,
                "SELECT max(raised_at) FROM tidings_raised_notifications WHERE account = ? AND request_id = ?",
                [account, identifier])
        }
        guard let seconds else { return nil }
        return (identifier, Date(timeIntervalSince1970: seconds))
    }

    /// The request identifier notification `serverID` of `account` was raised under (alone or as its group's
    /// newest), or nil when it was not raised: what a Nextcloud push's `nid` is mapped to when another path raised
    /// the notification first.
    ///
    /// - Throws: `StoreError` from SQLite.
    public func raisedRequestIdentifier(account: String, serverID: ServerID) async throws -> String? {
        try await database.read { db in try Self.raisedRequestIdentifier(db, account: account, serverID: serverID) }
    }

    static func raisedRequestIdentifier(_ db: SQLiteConnection, account: String, serverID: ServerID) throws
        -> String?
    {
        let arguments: SQLiteArguments = [account, serverID.rawValue]
        if let alone = try db.fetchOne(
            String.self, "SELECT request_id FROM tidings_raised_notifications WHERE account = ? AND server_id = ?",
            arguments)
        {
            return alone
        }
        return try db.fetchOne(
            String.self, "SELECT request_id FROM tidings_raised_groups WHERE account = ? AND newest_id = ?",
            arguments)
    }
}
