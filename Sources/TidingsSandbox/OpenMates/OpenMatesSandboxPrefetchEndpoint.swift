import Foundation
import TidingsCore
import TidingsNet
import TidingsOpenMates
import TidingsSandboxKit

/// The sandbox's `POST /v1/sync/offline-prefetch` over an ``OpenMatesSandboxServer``'s chats, in process and
/// on loopback HTTP, with the public server's rules as the seeds' README states them:
///
/// - Authentication is the `auth_refresh_token` cookie (the server's token): 401 without it or with another.
/// - The body is `{cursor, limit, include_embeds}`: cursor 10…100 (default 10), limit 1…5 (default 3),
///   include_embeds a boolean (default false); anything else is a 422 naming the field.
/// - 30 requests per minute (a sliding window on the injected clock); past it a 429 with `Retry-After` in
///   whole seconds until a slot frees. Refused requests do not count.
/// - The cursor is an offset over all of the user's chats, sub-chats included, the most recently edited first
///   (so a page can repeat a chat phase 1b sent). Deleted chats are gone from the order; hidden chats are in
///   it and sent flagged `is_hidden: true` with their messages: the client must skip them.
/// - `chats` are flat database rows (`id`, versions as columns, `is_hidden`, `encrypted_chat_key`, …);
///   messages are in `messages_by_chat_id`, versions in `versions_by_chat_id`, and with `include_embeds` the
///   chats' `embeds` and `embed_keys`. `next_cursor` is the offset after the page; `done` says the order ends
///   there (or, with ``OpenMatesSandboxPrefetchVariant/doneOnExtraEmptyPage``, on the empty page after it).
///
/// For example:
/// ```swift
/// let endpoint = OpenMatesSandboxPrefetchEndpoint(server: sandbox)
/// let listener = try endpoint.serve()                     // http://127.0.0.1:<port>/
/// ```
public final class OpenMatesSandboxPrefetchEndpoint: Sendable {
    /// Requests allowed per ``rateWindow``.
    public static let rateLimit = 30
    /// The rate limit's window.
    public static let rateWindow: Duration = .seconds(60)

    /// The sandbox whose chats are served.
    public let server: OpenMatesSandboxServer
    /// The HTTP server answering the endpoint (its faults and log are the kit's).
    public let http: SandboxHTTPServer

    private let core: Core

    /// The fault switches of every request (a 500, a malformed body, a hang: `neverAnswer`).
    public var faults: SandboxFaultSwitch { http.faults }
    /// Every request, with its status and byte counts.
    public var log: SandboxRequestLog { http.log }
    /// The switches in force.
    public var variant: OpenMatesSandboxPrefetchVariant {
        get { core.state.withLock { $0.variant } }
        set { core.state.withLock { $0.variant = newValue } }
    }
    /// Every request the handler answered (one a fault answered instead is only in ``log``), in order.
    public var served: [Served] { core.state.withLock { $0.served } }

    /// One answered request: when (on the endpoint's clock, since it was made), the cursor asked for (nil when
    /// the body had none that could be read) and the status.
    public struct Served: Sendable, Hashable {
        /// Time since the endpoint was made, on its clock.
        public var at: Duration
        /// The cursor of the body, when it had a readable one.
        public var cursor: Int?
        /// The status answered.
        public var status: Int
    }

    /// An endpoint over `server`'s chats; `clock` runs the rate limit's window and the `delay` fault.
    public init(
        server: OpenMatesSandboxServer, clock: any Clock<Duration> = ContinuousClock(),
        faults: SandboxFaultSwitch = SandboxFaultSwitch(), log: SandboxRequestLog = SandboxRequestLog()
    ) {
        self.server = server
        let core = Core(server: server, timeline: Timeline(clock))
        self.core = core
        var router = SandboxHTTPRouter()
        router.add("POST", OpenMatesPrefetchRequest.path) { request in await core.answer(request) }
        http = SandboxHTTPServer(router: router, faults: faults, log: log, clock: clock)
    }

    /// Serves the endpoint on 127.0.0.1 (`port` 0: a free one) until the listener is stopped.
    ///
    /// - Throws: `TidingsNet/TransportError` when the port cannot be bound.
    public func serve(port: Int = 0) throws -> SandboxHTTPListener { try http.serve(port: port) }

    /// Sends one raw request in process, with the faults and the log (for tests of the endpoint's own checks:
    /// a body or cookie the client never sends).
    public func send(body: Data, cookie: String?, method: String = "POST") async -> OpenMatesPrefetchReply {
        var headers: HTTPHeaders = ["Content-Type": "application/json"]
        if let cookie { headers.add(name: "Cookie", value: cookie) }
        let response = await http.handle(
            SandboxHTTPRequest(method: method, target: OpenMatesPrefetchRequest.path, headers: headers, body: body))
        var fields: [String: String] = [:]
        for (name, value) in response.headers { fields[name] = value }
        return OpenMatesPrefetchReply(status: response.status, headers: fields, body: response.payload)
    }

    /// A transport reaching the endpoint in process (no socket), sending `refreshToken` as the cookie.
    public func inProcessTransport(refreshToken: String?) -> any OpenMatesPrefetchTransport {
        InProcessPrefetchTransport(http: http, refreshToken: refreshToken)
    }

}

/// The endpoint's semantics and state, apart from the HTTP server that calls it.
private final class Core: Sendable {
    struct State {
        var variant = OpenMatesSandboxPrefetchVariant()
        var accepted: [Duration] = []
        var served: [OpenMatesSandboxPrefetchEndpoint.Served] = []
    }

    let server: OpenMatesSandboxServer
    let state = LockedState(State())
    let timeline: Timeline

    init(server: OpenMatesSandboxServer, timeline: Timeline) {
        self.server = server
        self.timeline = timeline
    }

    var variant: OpenMatesSandboxPrefetchVariant { state.withLock { $0.variant } }

    func answer(_ request: SandboxHTTPRequest) async -> SandboxHTTPResponse {
        let response = await respond(request)
        let cursor = (try? JSONValue(parsing: request.body, maximumDepth: 16))?["cursor"]?.intValue
        let served = OpenMatesSandboxPrefetchEndpoint.Served(
            at: timeline.elapsed, cursor: cursor, status: response.status)
        state.withLock { $0.served.append(served) }
        return response
    }

    private func respond(_ request: SandboxHTTPRequest) async -> SandboxHTTPResponse {
        guard request.cookies["auth_refresh_token"] == server.token else {
            return .json(["detail": "Not authenticated"], status: 401)
        }
        let body: [String: JSONValue]
        if request.body.isEmpty {
            body = [:]
        } else {
            guard let parsed = (try? JSONValue(parsing: request.body, maximumDepth: 16))?.objectValue else {
                return Self.invalid("body", "not a JSON object")
            }
            body = parsed
        }
        guard let cursor = Self.int(body["cursor"], default: 10), OpenMatesPrefetchRequest.cursorRange ~= cursor
        else { return Self.invalid("cursor", "must be an integer from 10 to 100") }
        guard let limit = Self.int(body["limit"], default: 3), OpenMatesPrefetchRequest.limitRange ~= limit else {
            return Self.invalid("limit", "must be an integer from 1 to 5")
        }
        let includeEmbeds: Bool
        switch body["include_embeds"] {
        case nil, .null?: includeEmbeds = false
        case .bool(let value)?: includeEmbeds = value
        default: return Self.invalid("include_embeds", "must be a boolean")
        }
        if let wait = admit() {
            var response = SandboxHTTPResponse.json(["detail": "Rate limit exceeded: 30 per 1 minute"], status: 429)
            response.headers.add(name: "Retry-After", value: String(wait))
            return response
        }
        let page = await page(cursor: cursor, limit: limit, includeEmbeds: includeEmbeds, variant: variant)
        return SandboxHTTPResponse(
            status: 200, headers: ["Content-Type": "application/json"],
            body: Data(JSONValue.object(page).jsonString(sortedKeys: true).utf8))
    }

    /// Counts the request in the window, or says how many whole seconds until a slot frees.
    private func admit() -> Int? {
        let now = timeline.elapsed
        return state.withLock { state -> Int? in
            let window = OpenMatesSandboxPrefetchEndpoint.rateWindow
            state.accepted.removeAll { $0 <= now - window }
            guard state.accepted.count >= OpenMatesSandboxPrefetchEndpoint.rateLimit, let oldest = state.accepted.first
            else {
                state.accepted.append(now)
                return nil
            }
            let wait = oldest + window - now
            let seconds = wait.components.seconds + (wait.components.attoseconds > 0 ? 1 : 0)
            return Int(max(1, seconds))
        }
    }

    private func page(cursor: Int, limit: Int, includeEmbeds: Bool, variant: OpenMatesSandboxPrefetchVariant) async
        -> [String: JSONValue]
    {
        let order = await server.orderedChats
        var slice: [OpenMatesSandboxChat] = []
        if cursor < order.count {
            let size = variant.shortPages ? max(1, limit - 1) : limit
            slice = Array(order[cursor..<min(order.count, cursor + size)])
        }
        let next = cursor + slice.count
        let done = variant.doneOnExtraEmptyPage ? slice.isEmpty : next >= order.count
        if variant.repeatPhase1bChats, cursor == OpenMatesPrefetchRequest.firstCursor {
            let parents = order.filter { $0.parentChatID == nil }.prefix(10)
            slice = Array(parents.prefix(limit)) + slice
        }
        var messages: [String: JSONValue] = [:]
        var versions: [String: JSONValue] = [:]
        var embeds: [JSONValue] = []
        var keys: [JSONValue] = []
        for chat in slice {
            messages[chat.chatID] = .array(chat.messages.map(JSONValue.object))
            versions[chat.chatID] = [
                "messages_v": .int(Int64(chat.messagesV)), "server_message_count": .int(Int64(chat.messages.count)),
            ]
            if includeEmbeds {
                embeds += chat.embeds.map(JSONValue.object)
                keys += chat.embedKeys.map(JSONValue.object)
            }
        }
        var page: [String: JSONValue] = [
            "chats": .array(slice.map { .object(Self.row($0)) }), "messages_by_chat_id": .object(messages),
            "versions_by_chat_id": .object(versions), "next_cursor": .int(Int64(next)), "done": .bool(done),
        ]
        if includeEmbeds {
            page["embeds"] = .array(embeds)
            page["embed_keys"] = .array(keys)
        }
        return page
    }

    /// A chat as its database row: flat columns, `id` rather than `chat_id`.
    static func row(_ chat: OpenMatesSandboxChat) -> [String: JSONValue] {
        var row: [String: JSONValue] = [
            "id": .string(chat.chatID), "messages_v": .int(Int64(chat.messagesV)),
            "title_v": .int(Int64(chat.titleV)), "draft_v": .int(Int64(chat.draftV)),
            "encrypted_title": .string(chat.encryptedTitle),
            "last_edited_overall_timestamp": .int(Int64(chat.lastEdited)), "pinned": .bool(chat.pinned),
            "is_hidden": .bool(chat.hidden), "is_archived": .bool(chat.archived), "unread_count": 0,
            "encrypted_chat_key": .string("wrapped-key-\(chat.chatID)"),
            "hashed_user_id": "sandbox-user", "created_at": .int(Int64(chat.lastEdited)),
        ]
        row["parent_chat_id"] = chat.parentChatID.map(JSONValue.string) ?? .null
        return row
    }

    private static func int(_ value: JSONValue?, default fallback: Int) -> Int? {
        guard let value, !value.isNull else { return fallback }
        return value.intValue
    }

    private static func invalid(_ field: String, _ message: String) -> SandboxHTTPResponse {
        let detail: JSONValue = [["loc": ["body", .string(field)], "msg": .string(message), "type": "value_error"]]
        return .json(["detail": detail] as JSONValue, status: 422)
    }
}

/// The endpoint in process: the kit's handler with its faults and log, without a socket.
private struct InProcessPrefetchTransport: OpenMatesPrefetchTransport {
    let http: SandboxHTTPServer
    let refreshToken: String?
    var host: String { "127.0.0.1" }

    func post(_ request: OpenMatesPrefetchRequest, timeout: Duration) async throws -> OpenMatesPrefetchReply {
        var headers: HTTPHeaders = ["Content-Type": "application/json"]
        if let refreshToken { headers.add(name: "Cookie", value: "auth_refresh_token=\(refreshToken)") }
        let response = await http.handle(
            SandboxHTTPRequest(
                method: "POST", target: OpenMatesPrefetchRequest.path, headers: headers, body: request.body))
        try Task.checkCancellation()
        guard response.connectionFault == nil else { throw OpenMatesPrefetchError.transport }
        var fields: [String: String] = [:]
        for (name, value) in response.headers { fields[name] = value }
        return OpenMatesPrefetchReply(status: response.status, headers: fields, body: response.payload)
    }
}
