import Foundation

/// What the policy decided for one candidate, with the reason.
public enum NotificationDecision: Hashable, Sendable {
    /// Show a new notification.
    case raise(NotificationRequest)
    /// Replace the notification already shown under the same request identifier (a grown v2 group).
    case update(NotificationRequest)
    /// Show nothing now; feed the server's unread list to the policy again at `until` (quiet hours' end or a
    /// digest time). Nothing is stored for it.
    case hold(until: Date, reason: NotificationHoldReason)
    /// Show nothing, ever.
    case drop(NotificationDropReason)

    /// The request to display, for `raise` and `update`.
    public var request: NotificationRequest? {
        switch self {
        case .raise(let request), .update(let request): request
        case .hold, .drop: nil
        }
    }
}

/// Why a candidate is held.
public enum NotificationHoldReason: String, Hashable, Sendable {
    /// It arrived inside the account's quiet hours.
    case quietHours
    /// The account delivers a digest.
    case digest
}

/// Why a candidate is dropped.
public enum NotificationDropReason: String, Hashable, Sendable {
    /// It (or its group at this size) was already raised, through any origin.
    case alreadyRaised
    /// The notifications marker covers it: it was read, perhaps on another device.
    case coveredByMarker
    /// Its category is switched off for the account.
    case categoryOff
}
