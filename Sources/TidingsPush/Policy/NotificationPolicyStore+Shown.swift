import Foundation
import TidingsCore

/// Notifications shown outside the raised set (the generic notification an Apple extension must show for a push it
/// cannot use): kept in the account's state so that the next raise replaces it and sign-out withdraws it, in
/// whichever process showed it.
extension NotificationPolicyStore {
    /// Records that `requestIdentifier` is shown for `account` outside the raised set.
    ///
    /// - Throws: `StoreError` from SQLite.
    public func recordShown(account: String, requestIdentifier: String) async throws {
        try await database.write { db in
            try db.execute(
                "INSERT OR REPLACE INTO tidings_notification_state(account, key, value) VALUES (?, ?, '1')",
                [account, Self.shownKeyPrefix + requestIdentifier])
        }
    }

    /// Forgets that `requestIdentifier` is shown, in one write transaction: true only for the one caller that found
    /// it recorded (so only one withdraws it, across processes).
    ///
    /// - Throws: `StoreError` from SQLite.
    public func takeShown(account: String, requestIdentifier: String) async throws -> Bool {
        try await database.write { db in
            let arguments: SQLiteArguments = [account, Self.shownKeyPrefix + requestIdentifier]
            guard
                try db.fetchOne(
                    String.self, "SELECT value FROM tidings_notification_state WHERE account = ? AND key = ?",
                    arguments) != nil
            else { return false }
            try db.execute("DELETE FROM tidings_notification_state WHERE account = ? AND key = ?", arguments)
            return true
        }
    }

    /// The state key prefix of a notification shown outside the raised set.
    static let shownKeyPrefix = "shown:"

    /// The request identifiers recorded as shown for `account` (read inside sign-out's transaction).
    static func shownIdentifiers(_ db: SQLiteConnection, account: String) throws -> [String] {
        try db.fetchAll(
            String.self,
            "SELECT key FROM tidings_notification_state WHERE account = ? AND substr(key, 1, length(?)) = ?",
            [account, shownKeyPrefix, shownKeyPrefix]
        ).map { String($0.dropFirst(shownKeyPrefix.count)) }
    }
}
