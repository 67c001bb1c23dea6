import Foundation
import TidingsKecalek

extension KecalekSandboxServer {
    /// How a server the document allows may differ from the sandbox's defaults: the family of servers the
    /// client is tested against.
    ///
    /// The default (``standard``) keeps the sandbox's historic behaviour: millisecond timestamps that never
    /// tie, the oldest `limit` messages after `after_ts`, `offset` honoured, `>` and every notification.
    public struct Variant: Sendable, Hashable, CustomStringConvertible {
        /// How finely `created_at` (and deletion times) are recorded.
        public enum Resolution: Sendable, Hashable {
            /// A millisecond per message: timestamps never tie.
            case millisecond
            /// Whole seconds, written as the document's example `2026-02-15T22:15:45`: every message
            /// posted within one second shares its timestamp.
            case second
        }

        /// Which messages after `after_ts` a `get_messages` page holds.
        public enum PageOrder: Sendable, Hashable {
            /// The oldest `limit`, oldest first; `offset` counts forward.
            case oldestFirst
            /// The newest `limit`, newest first (as the call without `after_ts` picks them); `offset`
            /// counts back from the newest.
            case newestFirst
        }

        /// Which notifications connected members receive.
        public enum Notifications: Sendable, Hashable {
            /// Every notification.
            case all
            /// None at all: clients learn only by asking.
            case none
            /// Everything but `message_deleted`.
            case withoutDeletions
        }

        /// Timestamp resolution.
        public var resolution: Resolution
        /// Page order with `after_ts`.
        public var pageOrder: PageOrder
        /// Whether `offset` is honoured (otherwise every request is answered as if `offset` were 0).
        public var honoursOffset: Bool
        /// `>` or `>=` for `after_ts`.
        public var comparison: Comparison
        /// Which notifications are sent.
        public var notifications: Notifications
        /// The most messages one page holds whatever `limit` asks; nil for no cap.
        public var pageSizeCap: Int?

        /// Creates a variant; the defaults are the standard sandbox.
        public init(
            resolution: Resolution = .millisecond, pageOrder: PageOrder = .oldestFirst, honoursOffset: Bool = true,
            comparison: Comparison = .greater, notifications: Notifications = .all, pageSizeCap: Int? = nil
        ) {
            self.resolution = resolution
            self.pageOrder = pageOrder
            self.honoursOffset = honoursOffset
            self.comparison = comparison
            self.notifications = notifications
            self.pageSizeCap = pageSizeCap
        }

        /// The sandbox's historic behaviour.
        public static let standard = Variant()

        /// The independent server of issue 9: one-second timestamps, newest-first pages, no notifications.
        public static let secondsNewestFirstSilent = Variant(
            resolution: .second, pageOrder: .newestFirst, notifications: .none)

        public var description: String {
            var parts = ["\(resolution)", "\(pageOrder)", honoursOffset ? "offset" : "no-offset"]
            parts.append(comparison == .greater ? ">" : ">=")
            parts.append("notifications=\(notifications)")
            if let pageSizeCap { parts.append("cap=\(pageSizeCap)") }
            return parts.joined(separator: " ")
        }
    }

    /// Makes the server behave as `variant` from now on.
    public func setVariant(_ variant: Variant) {
        self.variant = variant
        comparison = variant.comparison
        if variant.resolution == .second { timestampStyle = .seconds }
    }

    /// A timestamp of the current wall time at the variant's resolution.
    func stamp() -> KecalekTimestamp {
        switch variant.resolution {
        case .millisecond:
            let written = KecalekTimestamp(microseconds: wallClock, style: timestampStyle)
            return KecalekTimestamp(written.text) ?? written
        case .second:
            let whole = wallClock - ((wallClock % 1_000_000) + 1_000_000) % 1_000_000
            return KecalekTimestamp(microseconds: whole, style: .seconds)
        }
    }

    /// The page of `get_messages` with `after_ts` as the variant answers it.
    func pageAfter(_ all: [StoredMessage], after: KecalekTimestamp, limit: Int, offset: Int) -> [StoredMessage] {
        let newer = all.filter {
            variant.comparison == .greater ? $0.wire.createdAt > after : $0.wire.createdAt >= after
        }
        let skip = variant.honoursOffset ? offset : 0
        let size = min(limit, variant.pageSizeCap ?? limit)
        switch variant.pageOrder {
        case .oldestFirst: return Array(newer.dropFirst(skip).prefix(size))
        case .newestFirst: return Array(newer.reversed().dropFirst(skip).prefix(size))
        }
    }

    /// Whether a notification of this kind goes out under the variant.
    func sends(_ notification: KecalekNotification) -> Bool {
        switch variant.notifications {
        case .all: return true
        case .none: return false
        case .withoutDeletions:
            if case .messageDeleted = notification { return false }
            return true
        }
    }
}
