import Foundation

/// How an account's pushes are used, chosen per account (issue 12, "Two modes").
public enum PushDeliveryMode: String, Hashable, Codable, Sendable {
    /// The push only triggers the account's notifications poll now; what is raised is decided, worded and
    /// deduplicated by that poll (the Android behaviour). The payload is never decrypted.
    case wake
    /// The push is decrypted and its `title`, `body`, `icon` and `notification_id` go through the same policy
    /// decision at once; the next poll then finds the ID in the raised set (a notification service extension).
    case content
}
