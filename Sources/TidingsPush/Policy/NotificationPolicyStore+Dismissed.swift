import Foundation
import TidingsCore

/// Notifications the server says were dismissed (a Nextcloud `delete`) while the policy still held them: they join
/// the raised set under one identifier that is never shown, so no path raises them later.
extension NotificationPolicyStore {
    /// The request identifier the raised set keeps `account`'s dismissed notifications under; never shown, so
    /// sign-out does not withdraw it.
    public static func dismissedIdentifier(account: String) -> String { "\(account)#dismissed" }

    /// Takes notification `serverID` of `account` down, in one write transaction: when it was raised (alone or as
    /// its group's newest) the request identifier it was raised under is returned for the caller to withdraw;
    /// otherwise it is recorded as dismissed (``dismissedIdentifier(account:)``) and nil is returned.
    ///
    /// - Throws: `StoreError` from SQLite.
    public func dismiss(account: String, serverID: ServerID, at now: Date) async throws -> String? {
        try await database.write { db in
            if let raised = try Self.raisedRequestIdentifier(db, account: account, serverID: serverID) {
                return raised
            }
            try db.execute(
                """
                INSERT OR IGNORE INTO tidings_raised_notifications(account, server_id, request_id, raised_at)
                VALUES (?, ?, ?, ?)
                """,
                [account, serverID.rawValue, Self.dismissedIdentifier(account: account), now.timeIntervalSince1970])
            return nil
        }
    }
}
