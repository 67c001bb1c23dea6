import Foundation
import TidingsCore

/// The app icon's badge: the unread group count (v2; v1's unread count otherwise), capped at 99.
public enum NotificationBadge {
    /// The highest number shown.
    public static let cap = 99

    /// The badge for `unreadCount` (negative counts show 0).
    public static func value(unreadCount: Int) -> Int { min(max(unreadCount, 0), cap) }

    /// The badge over every signed-in account, capped.
    public static func value(_ snapshot: WidgetSnapshot) -> Int {
        value(
            unreadCount: snapshot.accounts.reduce(0) { total, account in
                let (sum, overflow) = total.addingReportingOverflow(max(account.unreadCount, 0))
                return overflow ? Int.max : sum
            })
    }
}

/// Why widgets and the badge must be redrawn (the widgets keep no schedule of their own).
public enum NotificationRedrawReason: String, Hashable, Sendable {
    /// An account's unread count changed.
    case unreadCountChanged
    /// An account's recent mentions changed.
    case mentionsChanged
    /// The app left the foreground.
    case leftForeground
    /// A digest time came while the digest is on.
    case digestTime
    /// An account signed out.
    case signOut
}

/// `NotificationSignalCenter` emits the redraw signal: one element per reason, to every subscriber, from
/// snapshot changes and app events. It keeps the last snapshot to compare with; nothing else.
public final class NotificationSignalCenter: Sendable {
    private let broadcaster = ChangeBroadcaster<NotificationRedrawReason> { _ in .unreadCountChanged }
    private let last = LockedState<WidgetSnapshot?>(nil)

    /// A center with no snapshot yet.
    public init() {}

    /// A fresh stream of redraw reasons from now on.
    public func subscribe() -> ChangeSubscription<NotificationRedrawReason> {
        broadcaster.subscribe(bufferingLimit: 64)
    }

    /// Takes a new snapshot (after a poll, a push, a background run) and signals what changed.
    ///
    /// - Returns: The reasons signalled, empty when nothing that widgets show changed.
    @discardableResult
    public func update(_ snapshot: WidgetSnapshot) -> [NotificationRedrawReason] {
        let previous = last.withLock { state in
            defer { state = snapshot }
            return state
        }
        let reasons = Self.changes(from: previous, to: snapshot)
        for reason in reasons { broadcaster.publish(reason) }
        return reasons
    }

    /// The app left the foreground.
    public func appLeftForeground() { broadcaster.publish(.leftForeground) }

    /// A digest time came; signals only while some account's digest is on.
    public func digestTimeArrived(digestOn: Bool) { if digestOn { broadcaster.publish(.digestTime) } }

    /// An account signed out.
    public func signedOut() { broadcaster.publish(.signOut) }

    /// What changed from `old` to `new`: unread counts, then mentions (by account and ID). An account missing
    /// from one side counts as 0 unread and no mentions.
    public static func changes(from old: WidgetSnapshot?, to new: WidgetSnapshot) -> [NotificationRedrawReason] {
        let counts = { (snapshot: WidgetSnapshot?) in
            Dictionary(
                (snapshot?.accounts ?? []).filter { $0.unreadCount != 0 }.map { ($0.account, $0.unreadCount) },
                uniquingKeysWith: { a, _ in a })
        }
        let mentions = { (snapshot: WidgetSnapshot?) in
            Dictionary(
                (snapshot?.accounts ?? []).filter { !$0.recentMentions.isEmpty }.map {
                    ($0.account, $0.recentMentions.map(\.id))
                },
                uniquingKeysWith: { a, _ in a })
        }
        var reasons: [NotificationRedrawReason] = []
        if counts(old) != counts(new) { reasons.append(.unreadCountChanged) }
        if mentions(old) != mentions(new) { reasons.append(.mentionsChanged) }
        return reasons
    }
}
