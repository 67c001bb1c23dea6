import Foundation
import TidingsCore

/// A request frame: `{"type", "request_id", …parameters}`.
public struct KecalekRequest: Sendable, Hashable {
    /// The request type (`get_messages`, `get_deleted_since`, `mark_read`, …).
    public var type: String
    /// A fresh ID the response echoes.
    public var requestID: String
    /// The parameters, flattened into the frame next to `type` and `request_id`.
    public var parameters: [String: JSONValue]

    /// Creates a request.
    public init(type: String, requestID: String, parameters: [String: JSONValue]) {
        self.type = type
        self.requestID = requestID
        self.parameters = parameters
    }

    /// The frame's JSON text.
    public func encoded() -> Data {
        var members = parameters
        members["type"] = .string(type)
        members["request_id"] = .string(requestID)
        return JSONValue.object(members).kecalekFrame
    }

    /// Reads a request frame (the server side).
    ///
    /// - Throws: ``KecalekError/malformedFrame`` when the frame is not an object with a `type`.
    public init(frame: Data) throws {
        let json = try JSONValue(kecalekFrame: frame)
        guard var members = json.objectValue, let type = members["type"]?.stringValue else {
            throw KecalekError.malformedFrame("request without type")
        }
        members["type"] = nil
        let requestID = members.removeValue(forKey: "request_id")?.identifierValue ?? ""
        self.init(type: type, requestID: requestID, parameters: members)
    }
}

/// A response frame: `{"type", "request_id", "status", "data" | "error"}`.
public struct KecalekResponse: Sendable, Hashable {
    /// The request type echoed.
    public var type: String
    /// The request ID echoed.
    public var requestID: String
    /// `ok`, or the server's error status.
    public var status: String
    /// The result for `ok`.
    public var data: JSONValue
    /// The server's error text for other statuses.
    public var error: String?

    /// Creates a response.
    public init(type: String, requestID: String, status: String, data: JSONValue = .null, error: String? = nil) {
        self.type = type
        self.requestID = requestID
        self.status = status
        self.data = data
        self.error = error
    }

    /// Whether the status is `ok`.
    public var isOK: Bool { status == "ok" }

    /// The frame's JSON text.
    public func encoded() -> Data {
        var members: [String: JSONValue] = [
            "type": .string(type), "request_id": .string(requestID), "status": .string(status),
        ]
        if isOK { members["data"] = data }
        if let error { members["error"] = .string(error) }
        return JSONValue.object(members).kecalekFrame
    }
}

/// A server notification: a frame without a `request_id`.
///
/// Fields are read from the frame's `data` object, or from the frame itself when it has none.
public enum KecalekNotification: Sendable, Hashable {
    /// `messages_read`: `user_id` read `message_ids` at `read_at`.
    case messagesRead(conversationID: String, userID: String, messageIDs: [String], readAt: KecalekTimestamp?)
    /// `message_reacted`: the message's reactions are now `reactions`, or one reaction was added/removed.
    case messageReacted(conversationID: String, messageID: String, change: ReactionChange)
    /// `message_pinned` / `message_unpinned`.
    case messagePinned(conversationID: String, messageID: String, pinned: Bool)
    /// `new_message`: a message was posted.
    case newMessage(KecalekWireMessage)
    /// `message_deleted`: these messages were deleted.
    case messageDeleted(conversationID: String, messageIDs: [String])
    /// Any other type, kept so the client can log it.
    case unknown(type: String)

    /// How a `message_reacted` notification changes the reactions.
    public enum ReactionChange: Sendable, Hashable {
        /// The full list replaces the cached one.
        case replace([KecalekReaction])
        /// One reaction was added.
        case add(KecalekReaction)
        /// One reaction was removed.
        case remove(KecalekReaction)
    }

    /// The notification's type name.
    public var type: String {
        switch self {
        case .messagesRead: "messages_read"
        case .messageReacted: "message_reacted"
        case .messagePinned(_, _, let pinned): pinned ? "message_pinned" : "message_unpinned"
        case .newMessage: "new_message"
        case .messageDeleted: "message_deleted"
        case .unknown(let type): type
        }
    }

    /// The frame's JSON text (the sandbox sends these).
    public func encoded() -> Data {
        var data: [String: JSONValue] = [:]
        switch self {
        case .messagesRead(let conversation, let user, let ids, let readAt):
            data = ["conversation_id": .string(conversation), "user_id": .string(user)]
            data["message_ids"] = .array(ids.map(JSONValue.string))
            if let readAt { data["read_at"] = .string(readAt.text) }
        case .messageReacted(let conversation, let message, let change):
            data = ["conversation_id": .string(conversation), "message_id": .string(message)]
            switch change {
            case .replace(let reactions): data["reactions"] = .array(reactions.map(\.json))
            case .add(let reaction):
                data["user_id"] = .string(reaction.userID)
                data["emoji"] = .string(reaction.emoji)
                data["action"] = "add"
            case .remove(let reaction):
                data["user_id"] = .string(reaction.userID)
                data["emoji"] = .string(reaction.emoji)
                data["action"] = "remove"
            }
        case .messagePinned(let conversation, let message, _):
            data = ["conversation_id": .string(conversation), "message_id": .string(message)]
        case .newMessage(let message):
            data = ["message": message.json]
        case .messageDeleted(let conversation, let ids):
            data = ["conversation_id": .string(conversation), "message_ids": .array(ids.map(JSONValue.string))]
        case .unknown:
            break
        }
        return JSONValue.object(["type": .string(type), "data": .object(data)]).kecalekFrame
    }
}

/// What arrived on the connection: a response to match, or a notification to apply.
public enum KecalekInbound: Sendable, Hashable {
    /// A frame with a `request_id`.
    case response(KecalekResponse)
    /// A frame without one.
    case notification(KecalekNotification)

    /// Classifies and decodes one frame.
    ///
    /// - Throws: ``KecalekError/malformedFrame`` for non-JSON, a non-object, a missing `type`, or a
    ///   known notification missing its required fields.
    public init(frame: Data) throws {
        let json = try JSONValue(kecalekFrame: frame)
        guard case .object = json, let type = json["type"]?.stringValue else {
            throw KecalekError.malformedFrame("frame without type")
        }
        if let requestID = json["request_id"]?.identifierValue {
            let status = json["status"]?.stringValue ?? (json["error"] == nil ? "ok" : "error")
            let error = json["error"]?.stringValue ?? json["error"]?["message"]?.stringValue
            self = .response(
                KecalekResponse(
                    type: type, requestID: requestID, status: status, data: json["data"] ?? .null, error: error))
            return
        }
        var body = json
        if let data = json["data"], data.objectValue != nil { body = data }
        self = .notification(try Self.notification(type: type, body: body))
    }

    private static func notification(type: String, body: JSONValue) throws -> KecalekNotification {
        func required(_ key: String) throws -> String {
            guard let value = body[key]?.identifierValue else {
                throw KecalekError(.malformedFrame, operation: type, detail: "missing \(key)")
            }
            return value
        }
        func ids() -> [String] {
            if let list = body["message_ids"]?.arrayValue { return list.compactMap(\.identifierValue) }
            return body["message_id"]?.identifierValue.map { [$0] } ?? []
        }
        switch type {
        case "messages_read":
            return .messagesRead(
                conversationID: try required("conversation_id"), userID: try required("user_id"), messageIDs: ids(),
                readAt: body["read_at"]?.stringValue.flatMap(KecalekTimestamp.init))
        case "message_reacted":
            let conversation = try required("conversation_id")
            let message = try required("message_id")
            if let list = body["reactions"]?.arrayValue {
                return .messageReacted(
                    conversationID: conversation, messageID: message,
                    change: .replace(list.compactMap(KecalekReaction.init(json:))))
            }
            guard let reaction = KecalekReaction(json: body) else {
                throw KecalekError(.malformedFrame, operation: type, detail: "missing reactions or user_id/emoji")
            }
            let removed = ["remove", "removed", "delete"].contains(body["action"]?.stringValue ?? "")
            return .messageReacted(
                conversationID: conversation, messageID: message, change: removed ? .remove(reaction) : .add(reaction))
        case "message_pinned", "message_unpinned":
            return .messagePinned(
                conversationID: try required("conversation_id"), messageID: try required("message_id"),
                pinned: type == "message_pinned")
        case "new_message":
            let object = body["message"] ?? body
            return .newMessage(
                try KecalekWireMessage(json: object, conversationID: body["conversation_id"]?.identifierValue))
        case "message_deleted":
            return .messageDeleted(conversationID: try required("conversation_id"), messageIDs: ids())
        default:
            return .unknown(type: type)
        }
    }
}
