import Foundation
import TidingsCore

/// The server's objects as Mastodon sends them, with the variant's sparseness.
extension MastodonSandboxServer {
    static func date(_ date: Date) -> JSONValue {
        .string(date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
    }

    func accountJSON(_ id: String) -> JSONValue {
        let username = accounts.first { $0.id == id }?.username ?? "unknown"
        var object: [String: JSONValue] = [
            "id": .string(id), "username": .string(username), "acct": .string(username),
            "display_name": .string(username.capitalized), "url": .string("https://sandbox.invalid/@\(username)"),
        ]
        if variant.sparseFields {
            object["avatar"] = .string("")
            object["bot"] = .null
        } else {
            object["avatar"] = .string("https://sandbox.invalid/avatars/\(username).png")
            object["avatar_static"] = .string("https://sandbox.invalid/avatars/\(username).png")
            object["bot"] = .bool(false)
            object["locked"] = .bool(accounts.first { $0.id == id }?.locked ?? false)
            object["created_at"] = Self.date(Date(timeIntervalSince1970: 1_600_000_000))
        }
        return .object(object)
    }

    /// `context` (`home`, `public`): the filter context of the request; the viewer's v2 filters of that context
    /// that match the status are listed in its `filtered`, as Mastodon 4 does (`warn` and `hide` alike: acting on
    /// them is the client's part).
    func statusJSON(_ status: Status, viewer: String, context: String? = nil) -> JSONValue {
        var object: [String: JSONValue] = [
            "id": .string(status.id), "created_at": Self.date(status.createdAt),
            "account": accountJSON(status.accountID), "visibility": .string(status.visibility),
            "content": .string(status.content), "uri": .string("https://sandbox.invalid/statuses/\(status.id)"),
            "edited_at": status.editedAt.map(Self.date) ?? .null,
        ]
        if let reblogOf = status.reblogOf, let original = statuses.first(where: { $0.id == reblogOf }) {
            object["reblog"] = statusJSON(original, viewer: viewer, context: context)
            object["content"] = .string("")
        } else {
            object["reblog"] = .null
        }
        object["in_reply_to_id"] = status.inReplyTo.map(JSONValue.string) ?? .null
        object["in_reply_to_account_id"] =
            status.inReplyTo.flatMap { id in statuses.first { $0.id == id }?.accountID }.map(JSONValue.string) ?? .null
        if variant.sparseFields { return .object(object) }
        let boosts = statuses.filter { !$0.deleted && $0.reblogOf == status.id }
        object["favourites_count"] = .int(Int64(status.favouritedBy.count))
        object["reblogs_count"] = .int(Int64(boosts.count))
        object["replies_count"] = .int(Int64(statuses.filter { !$0.deleted && $0.inReplyTo == status.id }.count))
        object["favourited"] = .bool(status.favouritedBy.contains(viewer))
        object["reblogged"] = .bool(boosts.contains { $0.accountID == viewer })
        object["bookmarked"] = .bool(status.bookmarkedBy.contains(viewer))
        object["muted"] = .bool(status.mutedBy.contains(viewer))
        object["pinned"] = .bool(status.pinned && status.accountID == viewer)
        object["poll"] = status.poll.map { pollJSON($0, viewer: viewer) } ?? .null
        if variant.newerEnumValues {
            // Values a newer server sends that this client's enums do not name: they must survive as sent.
            object["visibility"] = .string(MastodonSandboxVariant.newerVisibility)
            object["media_attachments"] = .array([
                [
                    "id": .string("m\(status.id)"), "type": .string(MastodonSandboxVariant.newerMediaType),
                    "url": .string("https://sandbox.invalid/media/\(status.id).glb"),
                ]
            ])
        }
        object["sensitive"] = .bool(false)
        object["spoiler_text"] = .string("")
        if object["media_attachments"] == nil { object["media_attachments"] = .array([]) }
        object["mentions"] = .array([])
        if let context, variant.hasVersion2 {
            object["filtered"] = .array(filterResults(status, viewer: viewer, context: context))
        }
        return .object(object)
    }

    func notificationJSON(_ notification: Notification, viewer: String) -> JSONValue {
        let type = variant.newerEnumValues ? MastodonSandboxVariant.newerNotificationType : notification.type
        var object: [String: JSONValue] = [
            "id": .string(notification.id), "type": .string(type),
            "created_at": Self.date(notification.createdAt), "account": accountJSON(notification.accountID),
            "group_key": .string(groupKey(notification)),
        ]
        if let statusID = notification.statusID, let index = liveIndex(statusID) {
            object["status"] = statusJSON(statuses[index], viewer: viewer)
        }
        return .object(object)
    }

    func groupKey(_ notification: Notification) -> String {
        switch notification.type {
        case "favourite", "reblog": "\(notification.type)-\(notification.statusID ?? "")"
        default: "ungrouped-\(notification.id)"
        }
    }

    func instanceV1JSON(_ origin: Origin) -> JSONValue {
        var object: [String: JSONValue] = [
            "uri": "sandbox.invalid", "title": "Tidings sandbox",
            "version": variant.nextcloudSocial
                ? "2.7.0" : (variant.version1Only ? "2.7.2 (compatible; Pleroma 2.5.0)" : "4.3.2"),
            "configuration": ["statuses": ["max_characters": 500, "max_media_attachments": 4]],
        ]
        if variant.nextcloudSocial {
            object["urls"] = .object([:])
            object["vapid_key"] = ""
        } else {
            object["urls"] = ["streaming_api": .string(origin.webSocket)]
        }
        return .object(object)
    }

    func instanceV2JSON(_ origin: Origin) -> JSONValue {
        [
            "domain": "sandbox.invalid", "title": "Tidings sandbox", "version": "4.3.2",
            "configuration": [
                "urls": ["streaming": .string(origin.webSocket)],
                "vapid": ["public_key": "BSandboxVapidPublicKeyNotASecret"],
                "statuses": ["max_characters": 500, "max_media_attachments": 4],
            ],
        ]
    }
}
