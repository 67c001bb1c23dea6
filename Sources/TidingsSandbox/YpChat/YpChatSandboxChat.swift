import Foundation
import TidingsCore
import TidingsSandboxKit
import TidingsYpChat

/// The Socket.IO side of the YpChat sandbox: sockets, who is logged in on which, messages,
/// blocks, and the answers to the plan's emits.
///
/// Semantics:
/// - `setSessionId {expressSessionId}` binds the socket to that cookie session (recorded in
///   ``sessionIDsReceived`` for tests); when the session is logged in already (a reconnect, the app
///   back in the foreground, a restored session) the socket is logged in as its user at once and
///   answered `loginSuccess`. `login` needs a nickname of at least 3 characters that no socket of
///   another session uses (a socket of the same session hands it over), stores the user on the
///   session, answers `loginSuccess` and sends every socket the new `userList`.
/// - Inactivity: a user who sent nothing for 30 minutes (on the server's inactivity clock) is logged
///   out when the next event reaches the server: the session forgets the user, the user's sockets get
///   `error {message: "logged out after 30 minutes without activity"}`, everyone a new `userList`.
/// - `message` with `toUserName` goes to that user's sockets (unless the recipient blocked the
///   sender, when it is dropped silently as on a real server) and is confirmed to the sender with
///   `messageSent {messageId}`, and the recipient gets `unreadChats` with its count of unread
///   conversations; an unknown recipient is an `error`. Without `toUserName` a text
///   starting with `/` is a console command: `/help` answers `commandResult`, `/users` answers
///   `commandTable`, `/whoami` a `commandResult` with the user's profile, anything else an `error`.
/// - `requestConversation` answers `conversation` (and marks it read), `requestHistory`
///   `historyResults`, `requestOpenConversations` `inboxResults` then `unreadChats`, `userSearch`
///   `searchResults` (name substring, age range, countries, genders; empty lists mean any),
///   `blockUser`/`unblockUser` `userBlocked`/`userUnblocked`.
/// - `POST api/logout` logs the session's sockets out; a user without another socket goes offline.
/// - A socket that goes away (a disconnect, or its connection ending) takes its user offline when
///   they have no other socket; the session keeps the user for the next socket's `setSessionId`.
/// - Emits before `login` are answered with `error {message: "not logged in"}`.
public actor YpChatSandboxChat {
    struct Connection {
        let socket: SandboxSocketIOSocket
        var sessionID: String?
        var userName: String?
    }

    struct StoredMessage {
        var message: YpChatMessage
        var read: Bool
    }

    private let state: YpChatSandboxState
    private var connections: [String: Connection] = [:]
    private var users: [String: YpChatUser] = [:]
    private var messages: [StoredMessage] = []
    private var blocks: [String: Set<String>] = [:]
    private var nextTimestamp = 1
    private var lastActivity: [String: Duration] = [:]
    private let elapsed: @Sendable () -> Duration
    /// How long a user may stay silent before the server logs them out: 30 minutes.
    public static let inactivityLimit = Duration.seconds(1_800)
    /// Every `setSessionId` received, in order, as (socket id, session id).
    public private(set) var sessionIDsReceived: [(socket: String, session: String)] = []
    /// The behaviour switches.
    public private(set) var variant = YpChatSandboxVariant()

    init(state: YpChatSandboxState, inactivityClock: any Clock<Duration> = ContinuousClock()) {
        self.state = state
        elapsed = Self.elapsedTime(on: inactivityClock)
    }

    private static func elapsedTime<C: Clock>(on clock: C) -> @Sendable () -> Duration where C.Duration == Duration {
        let start = clock.now
        return { start.duration(to: clock.now) }
    }

    /// Sends `event` with `arguments` as they are to every socket of `userName` (tests use it to send
    /// what the plan does not name, or payloads a client must survive).
    public func inject(_ event: String, _ arguments: [JSONValue], toUser userName: String) async {
        for connection in connections.values where connection.userName == userName {
            await connection.socket.emit(event, arguments)
        }
    }

    /// Changes the behaviour switches for what follows.
    public func setVariant(_ variant: YpChatSandboxVariant) { self.variant = variant }

    /// The users logged in now, by name.
    public var onlineUserNames: [String] { users.keys.sorted() }

    /// How many sockets are connected now (logged in or not).
    public var connectionCount: Int { connections.count }

    func connected(_ socket: SandboxSocketIOSocket) async {
        connections[socket.id] = Connection(socket: socket)
        await socket.emit("connected", [["socketId": .string(socket.id)]])
        if variant.extraUnknownEvents { await socket.emit("serverNotice", [["text": "sandbox"]]) }
    }

    /// The socket went away (a disconnect, or its connection ended): a user left without a socket goes
    /// offline and everyone gets the new `userList`. The session keeps its user, so the next socket's
    /// `setSessionId` logs them in again (a reconnect, the app back in the foreground).
    func disconnected(_ socket: SandboxSocketIOSocket) async {
        guard let connection = connections.removeValue(forKey: socket.id), let name = connection.userName else {
            return
        }
        guard !connections.values.contains(where: { $0.userName == name }) else { return }
        users[name] = nil
        lastActivity[name] = nil
        await broadcastUserList()
    }

    func handle(_ event: String, _ arguments: [JSONValue], on socket: SandboxSocketIOSocket) async {
        let payload = arguments.first ?? .null
        await expireInactiveUsers()
        switch event {
        case "setSessionId":
            guard let id = payload["expressSessionId"]?.stringValue else { return await error("no session id", socket) }
            sessionIDsReceived.append((socket.id, id))
            connections[socket.id]?.sessionID = id
            if let name = await state.session(id: id)?.userName {
                await bind(users[name] ?? YpChatUser(userName: name), to: socket)
            }
        case "login": await login(payload, socket)
        default:
            guard let me = connections[socket.id]?.userName else { return await error("not logged in", socket) }
            lastActivity[me] = elapsed()
            await handle(event, payload, from: me, socket)
        }
    }

    /// `POST api/logout` ended session `id`: its sockets are no longer logged in, and a user left
    /// without a socket goes offline (everyone gets the new `userList`).
    func sessionEnded(_ id: String) async {
        var names: Set<String> = []
        for (socketID, connection) in connections where connection.sessionID == id {
            if let name = connection.userName { names.insert(name) }
            connections[socketID]?.userName = nil
        }
        for name in names where !connections.values.contains(where: { $0.userName == name }) {
            users[name] = nil
            lastActivity[name] = nil
        }
        if !names.isEmpty { await broadcastUserList() }
    }

    /// Logs out every user silent for longer than ``inactivityLimit``.
    private func expireInactiveUsers() async {
        let now = elapsed()
        let expired = lastActivity.filter { now - $0.value > Self.inactivityLimit }.keys
        guard !expired.isEmpty else { return }
        for name in expired {
            lastActivity[name] = nil
            users[name] = nil
            for (id, connection) in connections where connection.userName == name {
                connections[id]?.userName = nil
                if let session = connection.sessionID { await state.setUser(nil, session: session) }
                await error("logged out after 30 minutes without activity", connection.socket)
            }
        }
        await broadcastUserList()
    }

    private func handle(_ event: String, _ payload: JSONValue, from me: String, _ socket: SandboxSocketIOSocket) async {
        switch event {
        case "message": await message(payload, from: me, socket)
        case "requestConversation":
            guard let partner = payload["withUserName"]?.stringValue else { return await error("withUserName", socket) }
            let between = indices(between: me, and: partner)
            for index in between where messages[index].message.toUserName == me { messages[index].read = true }
            await socket.emit(
                "conversation",
                [["withUserName": .string(partner), "messages": .array(between.map { messages[$0].message.json })]])
        case "requestHistory":
            await socket.emit("historyResults", [.array(summaries(for: me, unreadOnly: false).map(\.json))])
        case "requestOpenConversations":
            let open = summaries(for: me, unreadOnly: true)
            await socket.emit("inboxResults", [.array(open.map(\.json))])
            await socket.emit("unreadChats", [["count": .int(Int64(open.count))]])
        case "userSearch": await socket.emit("searchResults", [.array(search(payload, excluding: me).map(wire))])
        case "blockUser", "unblockUser":
            guard let user = payload["userName"]?.stringValue else { return await error("userName", socket) }
            if event == "blockUser" { blocks[me, default: []].insert(user) } else { blocks[me]?.remove(user) }
            await socket.emit(event == "blockUser" ? "userBlocked" : "userUnblocked", [["userName": .string(user)]])
        default: await error("unknown event \(event)", socket)
        }
    }

    private func login(_ payload: JSONValue, _ socket: SandboxSocketIOSocket) async {
        guard let user = YpChatUser(json: payload), user.userName.count >= 3 else {
            return await error("nickname needs at least 3 characters", socket)
        }
        let session = payload["expressSessionId"]?.stringValue ?? connections[socket.id]?.sessionID
        if let owner = connections.first(where: { $0.value.userName == user.userName }), owner.key != socket.id,
            owner.value.sessionID == nil || owner.value.sessionID != session
        {
            return await error("nickname taken", socket)
        }
        if let session { await state.setUser(user.userName, session: session) }
        await bind(user, to: socket)
    }

    /// Logs `socket` in as `user` (taking the name over from other sockets of the same session) and
    /// tells everyone.
    private func bind(_ user: YpChatUser, to socket: SandboxSocketIOSocket) async {
        for (id, connection) in connections where connection.userName == user.userName && id != socket.id {
            connections[id]?.userName = nil
        }
        connections[socket.id]?.userName = user.userName
        users[user.userName] = user
        lastActivity[user.userName] = elapsed()
        await socket.emit("loginSuccess", [wire(user)])
        await broadcastUserList()
    }

    private func broadcastUserList() async {
        let list = JSONValue.array(users.values.sorted { $0.userName < $1.userName }.map(wire))
        for connection in connections.values where connection.userName != nil {
            await connection.socket.emit("userList", [list])
        }
    }

    private func message(_ payload: JSONValue, from me: String, _ socket: SandboxSocketIOSocket) async {
        let text = payload["message"]?.stringValue ?? ""
        let messageId = payload["messageId"]?.identifierValue
        guard let recipient = payload["toUserName"]?.stringValue else {
            return await command(text, me, socket)
        }
        guard users[recipient] != nil else { return await error("unknown user \(recipient)", socket) }
        let isImage = payload["isImage"]?.boolValue ?? false
        let message = YpChatMessage(
            messageId: messageId, fromUserName: me, toUserName: recipient, text: text, isImage: isImage,
            imageUrl: isImage ? payload["imageUrl"]?.stringValue : nil, timestamp: String(nextTimestamp))
        nextTimestamp += 1
        if !(blocks[recipient]?.contains(me) ?? false) {
            messages.append(StoredMessage(message: message, read: false))
            let unread = summaries(for: recipient, unreadOnly: true).count
            for connection in connections.values where connection.userName == recipient {
                await connection.socket.emit("message", [message.json])
                await connection.socket.emit("unreadChats", [["count": .int(Int64(unread))]])
            }
        }
        if let messageId { await socket.emit("messageSent", [["messageId": .string(messageId)]]) }
    }

    private func command(_ text: String, _ me: String, _ socket: SandboxSocketIOSocket) async {
        switch text.split(separator: " ").first.map(String.init) {
        case "/help": await socket.emit("commandResult", [["result": "Befehle: /help, /users, /whoami"]])
        case "/whoami":
            let user = users[me] ?? YpChatUser(userName: me)
            let text = "\(user.userName)\n\(user.age.map(String.init) ?? "?") \(user.country ?? "?")"
            await socket.emit("commandResult", [["result": .string(text)]])
        case "/users":
            let table = YpChatCommandTable(
                columns: ["userName", "age", "country"],
                rows: users.values.sorted { $0.userName < $1.userName }.map {
                    [$0.userName, $0.age.map(String.init) ?? "", $0.country ?? ""]
                })
            await socket.emit("commandTable", [table.json])
        default: await error("unknown command", socket)
        }
    }

    private func indices(between me: String, and partner: String) -> [Int] {
        messages.indices.filter {
            let message = messages[$0].message
            return (message.fromUserName == me && message.toUserName == partner)
                || (message.fromUserName == partner && message.toUserName == me)
        }
    }

    private func summaries(for me: String, unreadOnly: Bool) -> [YpChatConversationSummary] {
        var order: [String] = []
        var result: [String: YpChatConversationSummary] = [:]
        for stored in messages {
            let message = stored.message
            guard message.fromUserName == me || message.toUserName == me else { continue }
            let partner = message.fromUserName == me ? (message.toUserName ?? "") : message.fromUserName
            if result[partner] == nil { order.append(partner) }
            var summary = result[partner] ?? YpChatConversationSummary(userName: partner)
            summary.lastMessage = message.isImage ? "[image]" : message.text
            if message.toUserName == me, !stored.read { summary.unreadCount += 1 }
            result[partner] = summary
        }
        return order.compactMap { result[$0] }.filter { !unreadOnly || $0.unreadCount > 0 }
    }

    private func search(_ query: JSONValue, excluding me: String) -> [YpChatUser] {
        let name = query["nameIncludes"]?.stringValue?.lowercased() ?? ""
        let minAge = query["minAge"]?.intValue ?? 0
        let maxAge = query["maxAge"]?.intValue ?? Int.max
        let countries = Set((query["countries"]?.arrayValue ?? []).compactMap(\.stringValue))
        let genders = Set((query["genders"]?.arrayValue ?? []).compactMap(\.stringValue))
        return users.values.filter { user in
            user.userName != me && (name.isEmpty || user.userName.lowercased().contains(name))
                && (minAge...max(minAge, maxAge)).contains(user.age ?? minAge)
                && (countries.isEmpty || countries.contains(user.country ?? ""))
                && (genders.isEmpty || genders.contains(user.gender ?? ""))
        }.sorted { $0.userName < $1.userName }
    }

    private func wire(_ user: YpChatUser) -> JSONValue {
        variant.omitOptionalUserFields ? ["userName": .string(user.userName)] : user.json
    }

    private func error(_ message: String, _ socket: SandboxSocketIOSocket) async {
        await socket.emit("error", [["message": .string(message)]])
    }
}
