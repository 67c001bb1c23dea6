import Foundation
import TidingsCore
import TidingsSandboxKit

/// The REST endpoints, on the kit's router.
extension MastodonSandboxServer {
    /// The server's endpoints on a `SandboxHTTPServer` (in process via `handle`, on loopback via `serve`),
    /// with the kit's fault switches and request log; the user stream is its WebSocket
    /// (`/api/v1/streaming?stream=user`, token in the `Authorization` header).
    public nonisolated func httpServer(
        faults: SandboxFaultSwitch = SandboxFaultSwitch(), log: SandboxRequestLog = SandboxRequestLog(),
        clock: any Clock<Duration> = ContinuousClock()
    ) -> SandboxHTTPServer {
        var router = SandboxHTTPRouter()
        let routes: [(String, String)] = [
            ("GET", "/api/v1/instance"), ("GET", "/api/v2/instance"), ("GET", "/api/v1/timelines/home"),
            ("GET", "/api/v1/timelines/public"), ("GET", "/api/v1/timelines/tag/:hashtag"),
            ("GET", "/api/v1/timelines/list/:id"), ("GET", "/api/v1/notifications"), ("GET", "/api/v2/notifications"),
            ("GET", "/api/v1/notifications/unread_count"), ("GET", "/api/v2/notifications/unread_count"),
            ("GET", "/api/v1/markers"), ("POST", "/api/v1/markers"), ("GET", "/api/v1/statuses"),
            ("GET", "/api/v1/statuses/:id"), ("POST", "/api/v1/statuses/:id/:action"), ("POST", "/api/v1/statuses"),
            ("POST", "/api/v1/accounts/:id/:action"), ("GET", "/api/v1/accounts/relationships"),
            ("GET", "/api/v2/filters"), ("GET", "/api/v1/filters"),
            ("GET", "/api/v1/polls/:id"), ("POST", "/api/v1/polls/:id/votes"),
            // Web Push subscriptions: MastodonSandboxServer+Push.swift.
            ("POST", "/api/v1/push/subscription"), ("GET", "/api/v1/push/subscription"),
            ("PUT", "/api/v1/push/subscription"), ("DELETE", "/api/v1/push/subscription"),
        ]
        for (method, pattern) in routes {
            router.add(method, pattern) { request in await self.respond(request, route: pattern) }
        }
        let frozen = router
        return SandboxHTTPServer(
            faults: faults, log: log, clock: clock, webSocket: { await self.serveStream($0, $1) },
            handler: { await frozen.route($0) })
    }

    func respond(_ request: SandboxHTTPRequest, route: String) -> SandboxHTTPResponse {
        if route.hasPrefix("/api/v2/"), !variant.hasVersion2 { return error(404, "Not found") }
        if route.hasSuffix("/instance") {
            let origin = Origin(request)
            return .json(route.hasPrefix("/api/v2/") ? instanceV2JSON(origin) : instanceV1JSON(origin))
        }
        guard let viewer = account(token: request.bearerToken) else {
            return error(401, "The access token is invalid")
        }
        guard let rateHeaders = spend(token: viewer.token) else {
            var response = error(429, "Too many requests")
            response.headers.add(name: "Retry-After", value: String(secondsLeftInWindow(viewer.token)))
            return response
        }
        var response =
            route == MastodonSandboxServer.pushRoute
            ? pushSubscriptions.answer(request, token: viewer.token) : answer(request, route: route, viewer: viewer.id)
        for (name, value) in rateHeaders { response.headers.add(name: name, value: value) }
        if !variant.nextcloudSocial, response.status == 200 {
            response.headers.add(name: "ETag", value: "W/\"\(response.body.count)-\(nextNumber)\"")
        }
        return response
    }

    private func answer(_ request: SandboxHTTPRequest, route: String, viewer: String) -> SandboxHTTPResponse {
        let id = request.pathParameters["id"] ?? ""
        switch (request.method, route) {
        case ("GET", "/api/v1/timelines/home"):
            let home = homeEntries(viewer)
            return page(request, items: home, path: route, hidden: isHidden) {
                statusJSON($0, viewer: viewer, context: "home")
            }
        case ("GET", "/api/v1/timelines/public"):
            // Every sandbox account is local, so `local=true` selects the same statuses.
            let items = statuses.reversed().filter { !$0.deleted && $0.visibility == "public" && $0.reblogOf == nil }
            return page(request, items: Array(items), path: route, hidden: isHidden) {
                statusJSON($0, viewer: viewer, context: "public")
            }
        case ("GET", "/api/v1/timelines/tag/:hashtag"):
            let raw = request.pathParameters["hashtag"] ?? ""
            let tag = raw.removingPercentEncoding ?? raw
            return page(request, items: tagEntries(tag), path: "/api/v1/timelines/tag/\(raw)", hidden: isHidden) {
                statusJSON($0, viewer: viewer, context: "public")
            }
        case ("GET", "/api/v1/timelines/list/:id"):
            guard let list = lists.first(where: { $0.id == id && $0.owner == viewer }) else {
                return error(404, "Record not found")
            }
            return page(
                request, items: listEntries(list), path: route.replacingOccurrences(of: ":id", with: id),
                hidden: isHidden
            ) { statusJSON($0, viewer: viewer, context: "home") }
        case ("GET", "/api/v1/notifications"):
            return page(request, items: visibleNotifications(viewer), path: route) {
                notificationJSON($0, viewer: viewer)
            }
        case ("GET", "/api/v2/notifications"):
            return groupedNotifications(request, viewer: viewer)
        case ("GET", "/api/v1/notifications/unread_count"), ("GET", "/api/v2/notifications/unread_count"):
            // Nextcloud Social's API has no unread count: its notifications route is the only one.
            guard !variant.nextcloudSocial else { return error(404, "Not found") }
            let count = min(unread(viewer, grouped: route.hasPrefix("/api/v2/")), 100)
            return .json(JSONValue.object(["count": .int(Int64(count))]))
        case ("GET", "/api/v2/filters"), ("GET", "/api/v1/filters"):
            return filtersResponse(route, viewer: viewer)
        case ("GET", "/api/v1/markers"):
            let asked = request.query.filter { $0.name == "timeline[]" }.map(\.value)
            return .json(markersJSON(viewer, timelines: asked.isEmpty ? ["home", "notifications"] : asked))
        case ("POST", "/api/v1/markers"):
            return saveMarkers(request, viewer: viewer)
        case ("GET", "/api/v1/statuses"):
            let name: String
            switch variant.statusesLookup {
            case .mastodon: name = "id[]"
            case .pleromaIDs: name = "ids[]"
            case .missing: return error(404, "Not found")
            }
            let ids = request.query.filter { $0.name == name }.map(\.value)
            if ids.isEmpty, variant.statusesLookup == .pleromaIDs { return error(400, "Missing field: ids.") }
            guard ids.count <= 20 else { return error(422, "Too many IDs") }
            let found = ids.compactMap { liveIndex($0) }.map { statusJSON(statuses[$0], viewer: viewer) }
            return .json(JSONValue.array(found))
        case ("GET", "/api/v1/statuses/:id"):
            guard let index = liveIndex(id) else { return error(404, "Record not found") }
            return .json(statusJSON(statuses[index], viewer: viewer))
        case ("POST", "/api/v1/statuses"):
            return compose(request, viewer: viewer)
        case ("POST", "/api/v1/statuses/:id/:action"):
            return statusAction(request.pathParameters["action"] ?? "", id: id, viewer: viewer)
        case ("GET", "/api/v1/polls/:id"):
            guard let index = pollIndex(id) else { return error(404, "Record not found") }
            return .json(pollJSON(statuses[index].poll!, viewer: viewer))
        case ("POST", "/api/v1/polls/:id/votes"):
            return vote(request, pollID: id, viewer: viewer)
        case ("GET", "/api/v1/accounts/relationships"):
            // Only what the client needs: whether the viewer follows (or asked to follow) each `id[]` (unknown IDs
            // are left out).
            let known = Set(accounts.map(\.id))
            let ids = request.query.filter { $0.name == "id[]" || $0.name == "id" }.map(\.value).filter(known.contains)
            return .json(JSONValue.array(ids.map { relationshipJSON(viewer, $0) }))
        case ("POST", "/api/v1/accounts/:id/:action"):
            guard accounts.contains(where: { $0.id == id }) else { return error(404, "Record not found") }
            switch request.pathParameters["action"] {
            case "follow": follow(viewer, id)
            case "unfollow": unfollow(viewer, id)
            default: return error(404, "Not found")
            }
            return .json(relationshipJSON(viewer, id))
        default:
            return error(404, "Not found")
        }
    }

    func error(_ status: Int, _ message: String) -> SandboxHTTPResponse {
        .json(JSONValue.object(["error": .string(message)]), status: status)
    }

    // MARK: - Timelines and paging

    func homeEntries(_ viewer: String) -> [Status] {
        let following = accounts.first { $0.id == viewer }?.following ?? []
        let all = statuses.reversed().filter {
            !$0.deleted && ($0.accountID == viewer || following.contains($0.accountID)) && $0.visibility != "direct"
        }
        return Array(all.prefix(variant.feedCap))
    }

    /// Whether the variant's keyword filter hides `status` (or the status it boosts).
    func isHidden(_ status: Status) -> Bool {
        guard let keyword = variant.hiddenKeyword, !keyword.isEmpty else { return false }
        let content = status.reblogOf.flatMap { id in statuses.first { $0.id == id }?.content } ?? status.content
        return content.contains(keyword)
    }

    /// One page of `items` (newest first, each with an `id`) as Mastodon pages, with `Link`; `hidden` items
    /// count against the limit and are then dropped, as Mastodon's filters do.
    func page<Item>(
        _ request: SandboxHTTPRequest, items: [Item], path: String, hidden: (Item) -> Bool = { _ in false },
        render: (Item) -> JSONValue
    ) -> SandboxHTTPResponse where Item: MastodonSandboxIdentified {
        var limit = 20
        if let text = request.queryValue("limit") {
            guard let value = Int(text), value >= 0 else { return error(400, "limit") }
            if value == 0 {
                if variant.nextcloudSocial { return error(400, "limit must be positive") }
            } else {
                limit = value
            }
        }
        limit = min(limit, variant.pageCap)
        let maxID = request.queryValue("max_id").map { ServerID($0) }
        let minID = request.queryValue("min_id").map { ServerID($0) }
        let sinceID = request.queryValue("since_id").map { ServerID($0) }
        var candidates = items.filter { item in
            let id = ServerID(item.sandboxID)
            return (maxID.map { id < $0 } ?? true) && (minID.map { id > $0 } ?? true)
                && (sinceID.map { id > $0 } ?? true)
        }
        let selected: [Item]
        if minID != nil, sinceID == nil {
            candidates = Array(candidates.suffix(limit))
            selected = candidates
        } else {
            selected = Array(candidates.prefix(limit))
        }
        // Filters drop items after paging: the page may be short while more remain.
        let unfiltered =
            variant.filtersPages ? selected.enumerated().filter { $0.offset % 3 != 1 }.map(\.element) : selected
        let shown = unfiltered.filter { !hidden($0) }
        var response = SandboxHTTPResponse.json(JSONValue.array(shown.map(render)))
        guard let newest = selected.first, let oldest = selected.last else { return response }
        var links: [(rel: String, url: URL)] = []
        let olderRemain = items.contains { ServerID($0.sandboxID) < ServerID(oldest.sandboxID) }
        let base = "\(Origin(request).http)\(path)?limit=\(limit)"
        if olderRemain, let url = URL(string: "\(base)&max_id=\(oldest.sandboxID)") { links.append(("next", url)) }
        if let url = URL(string: "\(base)&min_id=\(newest.sandboxID)") { links.append(("prev", url)) }
        response.addLinks(links)
        return response
    }

    // MARK: - Notifications and markers

    func groupedNotifications(_ request: SandboxHTTPRequest, viewer: String) -> SandboxHTTPResponse {
        var paged = page(request, items: visibleNotifications(viewer), path: "/api/v2/notifications") {
            notificationJSON($0, viewer: viewer)
        }
        guard paged.status == 200, let list = try? JSONValue(parsing: paged.body).arrayValue else { return paged }
        var order: [String] = []
        var groups: [String: [JSONValue]] = [:]
        for notification in list {
            let key = notification["group_key"]?.stringValue ?? ""
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(notification)
        }
        var accountsSeen: [String: JSONValue] = [:]
        var statusesSeen: [String: JSONValue] = [:]
        let rendered: [JSONValue] = order.map { key in
            let members = groups[key] ?? []
            let first = members.first ?? .null
            for member in members {
                if let account = member["account"], let id = account["id"]?.stringValue { accountsSeen[id] = account }
            }
            if let status = first["status"], let id = status["id"]?.stringValue { statusesSeen[id] = status }
            return [
                "group_key": .string(key), "type": first["type"] ?? .null,
                "notifications_count": .int(Int64(members.count)),
                "most_recent_notification_id": first["id"] ?? .null,
                "page_max_id": first["id"] ?? .null, "page_min_id": members.last?["id"] ?? .null,
                "latest_page_notification_at": first["created_at"] ?? .null,
                "sample_account_ids": .array(members.compactMap { $0["account"]?["id"] }),
                "status_id": first["status"]?["id"] ?? .null,
            ]
        }
        let body: JSONValue = [
            "notification_groups": .array(rendered), "accounts": .array(Array(accountsSeen.values)),
            "statuses": .array(Array(statusesSeen.values)),
        ]
        paged.body = body.jsonData()
        return paged
    }

    /// The viewer's notifications, newest first; those about a deleted status are gone, as on Mastodon.
    func visibleNotifications(_ viewer: String) -> [Notification] {
        notifications.reversed().filter { notification in
            notification.recipient == viewer && (notification.statusID.map { liveIndex($0) != nil } ?? true)
        }
    }

    func unread(_ viewer: String, grouped: Bool) -> Int {
        let marker: ServerID? = markers[viewer]?["notifications"].map { ServerID($0.id) }
        let unread = visibleNotifications(viewer).filter { notification in
            marker.map { ServerID(notification.id) > $0 } ?? true
        }
        return grouped ? Set(unread.map(groupKey)).count : unread.count
    }

    func markersJSON(_ viewer: String, timelines: [String]) -> JSONValue {
        var object: [String: JSONValue] = [:]
        for timeline in timelines {
            guard let marker = markers[viewer]?[timeline] else { continue }
            object[timeline] = [
                "last_read_id": .string(marker.id), "version": .int(Int64(marker.version)),
                "updated_at": Self.date(marker.updated),
            ]
        }
        return .object(object)
    }

    func saveMarkers(_ request: SandboxHTTPRequest, viewer: String) -> SandboxHTTPResponse {
        if markerConflicts > 0 {
            markerConflicts -= 1
            return error(409, "Conflict during update, please try again")
        }
        var saved: [String] = []
        for (name, value) in request.formFields {
            for timeline in ["home", "notifications"] where name == "\(timeline)[last_read_id]" {
                let version = (markers[viewer]?[timeline]?.version ?? 0) + 1
                markers[viewer, default: [:]][timeline] = (value, version, now())
                saved.append(timeline)
            }
        }
        guard !saved.isEmpty else { return error(422, "No marker") }
        return .json(markersJSON(viewer, timelines: saved))
    }

    // MARK: - Actions

    func statusAction(_ action: String, id: String, viewer: String) -> SandboxHTTPResponse {
        guard var index = liveIndex(id) else { return error(404, "Record not found") }
        // As on Mastodon, an action on a boost acts on the boosted status (a boost of a boost is the original's).
        if let original = statuses[index].reblogOf {
            guard let resolved = liveIndex(original) else { return error(404, "Record not found") }
            index = resolved
        }
        let id = statuses[index].id
        let author = statuses[index].accountID
        switch action {
        case "favourite":
            if statuses[index].favouritedBy.insert(viewer).inserted {
                notify(author, type: "favourite", from: viewer, status: id)
            }
        case "unfavourite": statuses[index].favouritedBy.remove(viewer)
        case "bookmark": statuses[index].bookmarkedBy.insert(viewer)
        case "unbookmark": statuses[index].bookmarkedBy.remove(viewer)
        case "pin", "unpin":
            // Only the author pins, and only their own post (not a boost).
            guard statuses[index].accountID == viewer, index == liveIndex(id) else {
                return error(422, "Validation failed: you can only pin your own posts")
            }
            statuses[index].pinned = action == "pin"
        case "mute": statuses[index].mutedBy.insert(viewer)
        case "unmute": statuses[index].mutedBy.remove(viewer)
        case "reblog":
            if !statuses.contains(where: { !$0.deleted && $0.reblogOf == id && $0.accountID == viewer }) {
                let boost = nextID()
                statuses.append(
                    Status(
                        id: boost, accountID: viewer, content: "", visibility: "public", createdAt: now(), reblogOf: id)
                )
                streamUpdate(statuses.count - 1, event: "update")
                notify(author, type: "reblog", from: viewer, status: id)
                return .json(statusJSON(statuses[statuses.count - 1], viewer: viewer))
            }
        case "unreblog":
            for boost in statuses.indices where statuses[boost].reblogOf == id && statuses[boost].accountID == viewer {
                statuses[boost].deleted = true
            }
        default:
            return error(404, "Not found")
        }
        return .json(statusJSON(statuses[index], viewer: viewer))
    }

    // MARK: - Rate limit

    /// Counts a request against the token's window; nil when the window is spent.
    func spend(token: String) -> [(String, String)]? {
        let current = now()
        var entry = requestCounts[token] ?? (current, 0)
        if current.timeIntervalSince(entry.windowStart) >= 300 { entry = (current, 0) }
        guard entry.count < variant.requestsPerWindow else {
            requestCounts[token] = entry
            return nil
        }
        entry.count += 1
        requestCounts[token] = entry
        let reset = entry.windowStart.addingTimeInterval(300)
        return [
            ("X-RateLimit-Limit", String(variant.requestsPerWindow)),
            ("X-RateLimit-Remaining", String(variant.requestsPerWindow - entry.count)),
            ("X-RateLimit-Reset", reset.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))),
        ]
    }

    func secondsLeftInWindow(_ token: String) -> Int {
        guard let start = requestCounts[token]?.windowStart else { return 0 }
        return max(1, Int((300 - now().timeIntervalSince(start)).rounded(.up)))
    }
}

/// An item a sandbox list pages by ID.
protocol MastodonSandboxIdentified { var sandboxID: String { get } }
extension MastodonSandboxServer.Status: MastodonSandboxIdentified { var sandboxID: String { id } }
extension MastodonSandboxServer.Notification: MastodonSandboxIdentified { var sandboxID: String { id } }
