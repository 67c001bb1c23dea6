import TidingsCore

/// A user as socket events carry it (`userList`, `searchResults`, `loginSuccess`).
///
/// Only `userName` is required; `gender`, `age` and `country` are optional (a server may leave
/// them out), and `age` is read from a number or a numeric string.
public struct YpChatUser: Sendable, Equatable, Hashable {
    /// The nickname, unique among users online.
    public var userName: String
    /// The gender code the server uses (e.g. `m`, `w`, `d`), if sent.
    public var gender: String?
    /// The age, if sent.
    public var age: Int?
    /// The country code, if sent.
    public var country: String?

    /// A user.
    public init(userName: String, gender: String? = nil, age: Int? = nil, country: String? = nil) {
        self.userName = userName
        self.gender = gender
        self.age = age
        self.country = country
    }

    /// Reads a user from a payload object; nil without a `userName` (also read as `name`).
    public init?(json: JSONValue) {
        guard let name = (json["userName"] ?? json["name"])?.stringValue, !name.isEmpty else { return nil }
        userName = name
        gender = json["gender"]?.stringValue
        age = json["age"]?.intValue ?? json["age"]?.stringValue.flatMap { Int($0) }
        country = json["country"]?.stringValue
    }

    /// The payload object (optional fields only when set).
    public var json: JSONValue {
        var members: [String: JSONValue] = ["userName": .string(userName)]
        if let gender { members["gender"] = .string(gender) }
        if let age { members["age"] = .int(Int64(age)) }
        if let country { members["country"] = .string(country) }
        return .object(members)
    }

    /// Users from an array payload, or from an object's `users` array; bad elements are skipped; nil
    /// when the payload is neither (a malformed event, which must not empty a list).
    static func list(_ json: JSONValue?) -> [YpChatUser]? {
        (json?.arrayValue ?? json?["users"]?.arrayValue)?.compactMap(YpChatUser.init(json:))
    }
}

/// A chat message as `message` and `conversation` carry it.
///
/// Required: the sender (`fromUserName`, also read as `from` or `userName`) and either text or an
/// image URL; everything else is optional.
public struct YpChatMessage: Sendable, Equatable, Hashable {
    /// The client-made id echoed by `messageSent`, if any.
    public var messageId: String?
    /// Who sent it.
    public var fromUserName: String
    /// To whom, if the server says.
    public var toUserName: String?
    /// The text (empty for an image).
    public var text: String
    /// Whether it is an image message.
    public var isImage: Bool
    /// The image's URL for an image message.
    public var imageUrl: String?
    /// When it was sent, as the server formats it.
    public var timestamp: String?

    /// A message.
    public init(
        messageId: String? = nil, fromUserName: String, toUserName: String? = nil, text: String,
        isImage: Bool = false, imageUrl: String? = nil, timestamp: String? = nil
    ) {
        self.messageId = messageId
        self.fromUserName = fromUserName
        self.toUserName = toUserName
        self.text = text
        self.isImage = isImage
        self.imageUrl = imageUrl
        self.timestamp = timestamp
    }

    /// Reads a message from a payload object; nil without a sender or without text and image.
    public init?(json: JSONValue) {
        guard let from = (json["fromUserName"] ?? json["from"] ?? json["userName"])?.stringValue, !from.isEmpty
        else { return nil }
        let text = (json["message"] ?? json["text"])?.stringValue
        let imageUrl = json["imageUrl"]?.stringValue
        guard text != nil || imageUrl != nil else { return nil }
        fromUserName = from
        self.text = text ?? ""
        self.imageUrl = imageUrl
        isImage = json["isImage"]?.boolValue ?? (imageUrl != nil && text == nil)
        messageId = json["messageId"]?.identifierValue
        toUserName = (json["toUserName"] ?? json["to"])?.stringValue
        timestamp = (json["timestamp"] ?? json["time"])?.identifierValue
    }

    /// The payload object (optional fields only when set).
    public var json: JSONValue {
        var members: [String: JSONValue] = ["fromUserName": .string(fromUserName), "message": .string(text)]
        if let messageId { members["messageId"] = .string(messageId) }
        if let toUserName { members["toUserName"] = .string(toUserName) }
        if isImage { members["isImage"] = .bool(true) }
        if let imageUrl { members["imageUrl"] = .string(imageUrl) }
        if let timestamp { members["timestamp"] = .string(timestamp) }
        return .object(members)
    }
}

/// One line of the inbox (`inboxResults`) or history (`historyResults`): a conversation partner.
public struct YpChatConversationSummary: Sendable, Equatable, Hashable {
    /// The other user.
    public var userName: String
    /// The newest message's text, if sent.
    public var lastMessage: String?
    /// Unread messages in it (0 when not sent).
    public var unreadCount: Int

    /// A summary.
    public init(userName: String, lastMessage: String? = nil, unreadCount: Int = 0) {
        self.userName = userName
        self.lastMessage = lastMessage
        self.unreadCount = unreadCount
    }

    /// Reads a summary; nil without `userName` (also `withUserName`); a bare string is a name.
    public init?(json: JSONValue) {
        if let name = json.stringValue, !name.isEmpty {
            self.init(userName: name)
            return
        }
        guard let name = (json["userName"] ?? json["withUserName"])?.stringValue, !name.isEmpty else { return nil }
        self.init(
            userName: name, lastMessage: (json["lastMessage"] ?? json["message"])?.stringValue,
            unreadCount: (json["unreadCount"] ?? json["unread"])?.intValue ?? 0)
    }

    /// The payload object.
    public var json: JSONValue {
        var members: [String: JSONValue] = ["userName": .string(userName), "unreadCount": .int(Int64(unreadCount))]
        if let lastMessage { members["lastMessage"] = .string(lastMessage) }
        return .object(members)
    }

    /// Summaries from an array payload or an object's `conversations` array; nil when neither.
    static func list(_ json: JSONValue?) -> [YpChatConversationSummary]? {
        (json?.arrayValue ?? json?["conversations"]?.arrayValue)?.compactMap(Self.init(json:))
    }
}

/// The table a console command answers with (`commandTable`).
public struct YpChatCommandTable: Sendable, Equatable, Hashable {
    /// Column titles.
    public var columns: [String]
    /// Rows of cells (numbers and booleans as text; a short row is padded with empty cells).
    public var rows: [[String]]

    /// A table.
    public init(columns: [String], rows: [[String]]) {
        self.columns = columns
        self.rows = rows
    }

    /// Reads `{columns|headers, rows}`; nil without columns.
    public init?(json: JSONValue) {
        guard let columns = (json["columns"] ?? json["headers"])?.arrayValue?.map(Self.cell) else { return nil }
        self.columns = columns
        rows = (json["rows"]?.arrayValue ?? []).map { row in
            let cells = (row.arrayValue ?? []).map(Self.cell)
            return cells.count < columns.count
                ? cells + Array(repeating: "", count: columns.count - cells.count) : cells
        }
    }

    /// The payload object.
    public var json: JSONValue {
        .object([
            "columns": .array(columns.map(JSONValue.string)),
            "rows": .array(rows.map { .array($0.map(JSONValue.string)) }),
        ])
    }

    static func cell(_ value: JSONValue) -> String {
        if let text = value.stringValue { return text }
        if let id = value.identifierValue { return id }
        if let flag = value.boolValue { return flag ? "true" : "false" }
        if let number = value.doubleValue { return String(number) }
        return ""
    }
}
