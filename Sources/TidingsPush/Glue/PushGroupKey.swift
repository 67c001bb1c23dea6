import Foundation
import TidingsCore
import TidingsMastodon

/// `PushGroupKey` derives the v2 group of a content-mode push, whose payload names none, as Mastodon 4.3+
/// forms it (`Notification::Groups#set_group_key!`): only favourites, boosts and follows group; favourites and
/// boosts by the post they concern, follows by kind alone; a group spans at most 12 hours from its first hour.
///
/// A payload names no post, but its `body` is that post's text (or content warning) as the server words it, so:
/// - a stored group (from an earlier poll) of the same kind whose post's text is the body, and whose newest
///   notification is less than 12 hours old, is the push's group: the push updates it in place;
/// - otherwise the push goes into a provisional group, `push-<kind>-<digest of the body>-<hour>`, continued by
///   the next push of that kind and text within 12 hours; the poll that sees the server's group adopts the
///   provisional notification (``NotificationPolicyStore``).
///
/// Two different posts with the same text share a provisional group until the poll; that is the price of a
/// payload without the post's ID.
public enum PushGroupKey {
    /// The kinds Mastodon groups (`GROUPABLE_NOTIFICATION_TYPES`).
    public static let groupedCategories: Set<NotificationCategory> = [.favourite, .reblog, .follow]
    /// How long a group may span (`MAXIMUM_GROUP_SPAN_HOURS`).
    public static let maximumSpanHours: Int64 = 12

    /// The provisional key's start for `category` and the pushed `body` (the body does not count for follows).
    public static func provisionalBase(_ category: NotificationCategory, body: String) -> String {
        let prefix = NotificationPolicyStore.provisionalGroupPrefix(category)
        guard category != .follow else { return prefix }
        let digest = TidingsCrypto.SHA256.hash(Array(normalized(body).utf8)).prefix(8)
        return prefix + digest.map { String(format: "%02x", $0) }.joined() + "-"
    }

    /// The hour bucket of `now`, continuing the latest of `existing` (keys that start with `base`) while it
    /// is less than 12 hours old, as Mastodon continues its group's bucket.
    public static func provisionalKey(base: String, now: Date, existing: [String]) -> String {
        let hour = Int64((now.timeIntervalSince1970 / 3600).rounded(.down))
        let previous = existing.compactMap { Int64($0.dropFirst(base.count)) }.max()
        if let previous, hour >= previous, hour - previous < maximumSpanHours { return base + String(previous) }
        return base + String(hour)
    }

    /// Whether a pushed `body` is the text a post shows: its content warning, or its content as plain text,
    /// whitespace collapsed; a body the server truncated (ending in `...` or `…`) matches the start of the text.
    public static func body(_ body: String, matches status: MastodonStatus) -> Bool {
        let shown = normalized(
            status.spoilerText.isEmpty ? NotificationPlainText.fromHTML(status.content) : status.spoilerText)
        let pushed = normalized(body)
        guard !pushed.isEmpty else { return false }
        if pushed == shown { return true }
        for omission in ["...", "…"] where pushed.hasSuffix(omission) {
            let start = pushed.dropLast(omission.count)
            if start.count >= 20, shown.hasPrefix(start) { return true }
        }
        return false
    }

    static func normalized(_ text: String) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }
}

extension PushGroupKey {
    /// The group a content-mode push of `category` with `body` belongs to at `now`: the newest of `groups` (the
    /// stored v2 groups, newest first) that it continues, else a provisional key continuing `existing(base)`
    /// (the policy's stored keys with that start); nil for a kind Mastodon does not group. The raiser and
    /// ``MastodonPushExtensionDecider`` both derive it here, so the app and its extension agree on the group.
    public static func key(
        _ category: NotificationCategory, body: String, now: Date, groups: [MastodonGroupPayload],
        existing: (String) async throws -> [String]
    ) async throws -> String? {
        guard groupedCategories.contains(category) else { return nil }
        let span = TimeInterval(maximumSpanHours * 3600)
        for stored in groups.reversed() {
            let group = stored.group
            guard NotificationCategory(type: group.type) == category, !group.groupKey.hasPrefix("ungrouped-"),
                let latest = group.latestPageNotificationAt, now.timeIntervalSince(latest) < span
            else { continue }
            if category == .follow { return group.groupKey }
            if let status = stored.status, Self.body(body, matches: status) { return group.groupKey }
        }
        let base = provisionalBase(category, body: body)
        return provisionalKey(base: base, now: now, existing: try await existing(base))
    }
}

extension MastodonNotificationRaiser {
    /// The group a content-mode push of `category` with `body` belongs to (``PushGroupKey``); nil for a kind
    /// Mastodon does not group.
    func pushGroupKey(_ category: NotificationCategory, body: String) async throws -> String? {
        guard PushGroupKey.groupedCategories.contains(category) else { return nil }
        let (policy, account) = (self.policy, self.account)
        return try await PushGroupKey.key(
            category, body: body, now: clock.now, groups: try await engine.notificationGroups()
        ) { base in try await policy.groupKeys(account: account, prefix: base) }
    }
}
