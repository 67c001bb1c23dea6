import TidingsCore

/// Everything the YpChat socket reports, as one enum: the server events of the plan, and the
/// connection's own (`connect`, `disconnect`, `connect_error`).
///
/// Decoding (``init(name:arguments:)``) is lenient: a missing optional field is nil, a list's bad
/// element is skipped, an event the plan does not name becomes ``unknown(_:)``, and a named event
/// whose payload lacks what it must have (a list event without a list included) becomes
/// ``malformed(_:)`` — neither ends the stream.
public enum YpChatSocketEvent: Sendable, Equatable {
    /// The namespace connected (first time or after a reconnect); `setSessionId` has been emitted.
    case connect
    /// The connection ended; the text says why.
    case disconnect(String)
    /// A connect or reconnect attempt failed; the text says why (`connect_error`).
    case connectError(String)
    /// `connected`: the server greets the socket (its socket id, if sent).
    case connected(socketId: String?)
    /// `loginSuccess`: the login was accepted for this user.
    case loginSuccess(YpChatUser)
    /// `userList`: the users online.
    case userList([YpChatUser])
    /// `message`: a message arrived.
    case message(YpChatMessage)
    /// `messageSent`: the server stored the message with this client-made id.
    case messageSent(messageId: String)
    /// `conversation`: the messages with one user (answer to `requestConversation`).
    case conversation(withUserName: String, messages: [YpChatMessage])
    /// `searchResults`: users matching `userSearch`.
    case searchResults([YpChatUser])
    /// `historyResults`: the conversation history (answer to `requestHistory`).
    case historyResults([YpChatConversationSummary])
    /// `inboxResults`: open conversations (answer to `requestOpenConversations`).
    case inboxResults([YpChatConversationSummary])
    /// `unreadChats`: how many conversations have unread messages.
    case unreadChats(Int)
    /// `userBlocked`: this user is now blocked.
    case userBlocked(String)
    /// `userUnblocked`: this user is no longer blocked.
    case userUnblocked(String)
    /// `commandResult`: a console command's text answer.
    case commandResult(String)
    /// `commandTable`: a console command's table answer.
    case commandTable(YpChatCommandTable)
    /// `error`: the server's error message.
    case error(String)
    /// An event the plan does not name (its name only; the payload is not kept).
    case unknown(String)
    /// A named event whose payload lacks a required field (the event's name).
    case malformed(String)

    /// Maps a server event to its case (see the type's description for leniency).
    public init(name: String, arguments: [JSONValue]) {
        let payload = arguments.first
        switch name {
        case "connected":
            self = .connected(socketId: (payload?["socketId"] ?? payload?["id"])?.stringValue ?? payload?.stringValue)
        case "loginSuccess":
            if let user = payload.flatMap(YpChatUser.init(json:)) {
                self = .loginSuccess(user)
            } else if let name = payload?.stringValue {
                self = .loginSuccess(YpChatUser(userName: name))
            } else {
                self = .malformed(name)
            }
        case "userList": self = YpChatUser.list(payload).map(Self.userList) ?? .malformed(name)
        case "message":
            self = payload.flatMap(YpChatMessage.init(json:)).map(Self.message) ?? .malformed(name)
        case "messageSent":
            self =
                (payload?["messageId"]?.identifierValue ?? payload?.identifierValue).map { .messageSent(messageId: $0) }
                ?? .malformed(name)
        case "conversation":
            guard let partner = (payload?["withUserName"] ?? payload?["userName"])?.stringValue else {
                self = .malformed(name)
                return
            }
            let messages = (payload?["messages"]?.arrayValue ?? []).compactMap(YpChatMessage.init(json:))
            self = .conversation(withUserName: partner, messages: messages)
        case "searchResults": self = YpChatUser.list(payload).map(Self.searchResults) ?? .malformed(name)
        case "historyResults":
            self = YpChatConversationSummary.list(payload).map(Self.historyResults) ?? .malformed(name)
        case "inboxResults":
            self = YpChatConversationSummary.list(payload).map(Self.inboxResults) ?? .malformed(name)
        case "unreadChats":
            self =
                (payload?.intValue ?? payload?["count"]?.intValue ?? payload?["unreadChats"]?.intValue)
                .map { .unreadChats(max(0, $0)) } ?? .malformed(name)
        case "userBlocked", "userUnblocked":
            guard let user = (payload?["userName"]?.stringValue ?? payload?.stringValue) else {
                self = .malformed(name)
                return
            }
            self = name == "userBlocked" ? .userBlocked(user) : .userUnblocked(user)
        case "commandResult":
            self =
                (payload?.stringValue ?? (payload?["result"] ?? payload?["message"])?.stringValue)
                .map(Self.commandResult) ?? .malformed(name)
        case "commandTable":
            self = payload.flatMap(YpChatCommandTable.init(json:)).map(Self.commandTable) ?? .malformed(name)
        case "error":
            self = .error(payload?.stringValue ?? (payload?["message"] ?? payload?["error"])?.stringValue ?? "error")
        default: self = .unknown(name)
        }
    }
}
