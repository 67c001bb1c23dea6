import Foundation
import TidingsCore
import TidingsMastodon

/// What one `tidings mastodon sync` did, printed at its end as text or as one JSON object.
struct MastodonSyncSummary: Sendable {
    var target: String
    var account: String
    var store: String
    var capabilities: MastodonCapabilities
    var streaming: Bool
    var home: MastodonTimelineApplyResult
    var cached: Int
    var gaps: Int
    var notifications: Int
    var unread: Int?
    var homeMarker: ServerID?
    var notificationsMarker: ServerID?
    var recheck: MastodonRecheckReport?
    var requests: Int
    var minIDRequests: Int

    func print(json: Bool) {
        if json {
            JSONLines.emit([
                "type": "sync", "target": target, "account": account, "store": store,
                "version": capabilities.versionString, "nextcloudSocial": capabilities.isNextcloudSocial,
                "streaming": capabilities.offersStreaming, "tier": streaming ? "streaming" : "polling",
                "home": [
                    "inserted": home.inserted, "gapInserted": home.gapInserted, "cached": cached, "gaps": gaps,
                ] as [String: Any],
                "notifications": notifications, "unread": unread.map { $0 as Any } ?? NSNull(),
                "markers": [
                    "home": homeMarker.map { $0.description as Any } ?? NSNull(),
                    "notifications": notificationsMarker.map { $0.description as Any } ?? NSNull(),
                ] as [String: Any],
                "recheck": recheck.map {
                    [
                        "checked": $0.checked.count, "deleted": $0.deleted.count, "updated": $0.updated.count,
                        "batched": $0.batched,
                    ] as [String: Any] as Any
                } ?? NSNull(),
                "requests": requests, "minIDRequests": minIDRequests,
            ])
            return
        }
        let kind = capabilities.isNextcloudSocial ? "Nextcloud Social" : "Mastodon"
        tidingsPrint("Synced \(account) with \(target) (\(kind) \(capabilities.versionString)) into \(store).")
        tidingsPrint(
            "Tier as the active account in the foreground: \(streaming ? "streaming" : "polling")\(capabilities.offersStreaming ? "" : " (no streaming offered)")."
        )
        tidingsPrint(
            "Home: \(home.inserted) new, \(cached) cached, \(gaps) gap(s)\(home.gapInserted ? ", a gap was left" : "")."
        )
        tidingsPrint(
            "Notifications: \(notifications) \(capabilities.supportsGroupedNotifications ? "groups" : "notifications") cached, unread \(unread.map(String.init) ?? "unknown")."
        )
        tidingsPrint(
            "Markers: home \(homeMarker?.description ?? "-"), notifications \(notificationsMarker?.description ?? "-")."
        )
        if let recheck {
            tidingsPrint(
                "Re-checked \(recheck.checked.count) cached statuses\(recheck.batched ? " in batches" : " one by one"): \(recheck.deleted.count) deleted, \(recheck.updated.count) updated."
            )
        } else {
            tidingsPrint("Re-check skipped: the server's rate-limit reserve is reached.")
        }
        tidingsPrint("Requests: \(requests) (\(minIDRequests) asked only for newer statuses, min_id).")
    }
}

/// The tool's `print` (the module's shadowing one), callable from inside a method named `print`.
private func tidingsPrint(_ line: String) { Console.current.writeOutput(line + "\n") }
