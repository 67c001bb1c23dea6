import Foundation
import TidingsCore

/// `NotificationWidgetBoard` joins every signed-in account's line of the widget snapshot: each account's
/// raiser hands in its line after a poll, a push or a background run, and the board writes the whole snapshot
/// (atomically, when it has a path) and tells the signal center, which signals a redraw only when something a
/// widget shows changed.
public final class NotificationWidgetBoard: Sendable {
    /// Where the snapshot is written (shared with the widget extension); nil keeps it in memory only.
    public let path: String?
    /// The redraw signal's center.
    public let signals: NotificationSignalCenter
    private let accounts = LockedState<[String: WidgetSnapshot.Account]>([:])

    /// A board writing to `path` and signalling through `signals`.
    public init(path: String? = nil, signals: NotificationSignalCenter = NotificationSignalCenter()) {
        self.path = path
        self.signals = signals
    }

    /// The snapshot as it stands, accounts sorted by key.
    public func snapshot(at now: Date) -> WidgetSnapshot {
        WidgetSnapshot(
            accounts: accounts.withLock { $0.values.sorted { $0.account < $1.account } }, generatedAt: now)
    }

    /// The badge over every account (unread groups, capped at 99).
    public var badge: Int { NotificationBadge.value(snapshot(at: Date(timeIntervalSince1970: 0))) }

    /// Replaces one account's line, writes the snapshot and signals what changed.
    ///
    /// The file is written on the caller's thread: call it from a store's queue (as the raiser does), not
    /// from the cooperative pool.
    ///
    /// - Returns: The redraw reasons signalled.
    /// - Throws: `WidgetSnapshotError` when the file cannot be written (the signal is still sent).
    @discardableResult
    public func update(_ line: WidgetSnapshot.Account, at now: Date) throws(WidgetSnapshotError)
        -> [NotificationRedrawReason]
    {
        accounts.withLock { $0[line.account] = line }
        return try publish(at: now)
    }

    /// Removes a signed-out account's line, writes the snapshot and signals the sign-out.
    ///
    /// - Throws: `WidgetSnapshotError` when the file cannot be written (the signal is still sent).
    public func remove(account: String, at now: Date) throws(WidgetSnapshotError) {
        accounts.withLock { $0[account] = nil }
        signals.signedOut()
        try publish(at: now)
    }

    @discardableResult
    private func publish(at now: Date) throws(WidgetSnapshotError) -> [NotificationRedrawReason] {
        let snapshot = snapshot(at: now)
        let reasons = signals.update(snapshot)
        if let path { try snapshot.write(to: path) }
        return reasons
    }
}
