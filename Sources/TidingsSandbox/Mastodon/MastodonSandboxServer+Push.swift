import Foundation
import TidingsCore

/// Web Push on the Mastodon sandbox: the subscription endpoint is answered by ``pushSubscriptions``
/// (Sources/TidingsSandbox/Push), after the same token check and rate budget as every other endpoint; every
/// new notification is pushed, as Mastodon pushes it, to its recipient's subscription.
extension MastodonSandboxServer {
    /// The path of the subscription endpoint.
    static let pushRoute = "/api/v1/push/subscription"

    /// Pushes `notification` to its recipient's subscription (if any, with that alert on).
    func pushNotification(_ notification: Notification) {
        guard let recipient = accounts.first(where: { $0.id == notification.recipient }) else { return }
        let sender = accounts.first { $0.id == notification.accountID }?.username ?? "someone"
        let text = notification.statusID.flatMap { id in statuses.first { $0.id == id } }?.content ?? ""
        let title =
            switch notification.type {
            case "mention": "\(sender) mentioned you"
            case "favourite": "\(sender) favourited your post"
            case "reblog": "\(sender) boosted your post"
            case "follow": "\(sender) followed you"
            case "status": "\(sender) just posted"
            default: "New notification from \(sender)"
            }
        // Mastodon's payload also carries the recipient's access token; the sandbox leaves it out so that no
        // test or listener output can show a token.
        let payload: JSONValue = .object([
            "notification_id": .string(notification.id), "notification_type": .string(notification.type),
            "title": .string(title), "body": .string(text), "preferred_locale": .string("en"),
            "icon": .string("https://sandbox.invalid/avatars/\(sender).png"),
        ])
        pushSubscriptions.push(
            payload, notificationID: notification.id, alert: notification.type, token: recipient.token)
    }
}
