/// The socket's connection as a screen shows it.
public enum ChatConnectionState: Sendable, Equatable, Hashable {
    /// No socket, or it closed.
    case disconnected
    /// A connect is under way.
    case connecting
    /// The namespace is connected (and `setSessionId` was sent).
    case connected
}

/// Where a sent message is: pending until the server's `messageSent` with its id, failed on an
/// `error` while pending, or a message someone else sent.
public enum ChatDeliveryStatus: Sendable, Equatable, Hashable {
    /// Emitted, not yet confirmed.
    case pending
    /// Confirmed by `messageSent`, or sent by this user as the server reports it.
    case sent
    /// The server answered `error` while it was pending (a later `messageSent` still confirms it).
    case failed
    /// From the conversation partner.
    case received
}

/// One line of the open conversation.
public struct ChatMessageItem: Sendable, Equatable, Hashable, Identifiable {
    /// The message's id: the client-made `messageId`, or one derived from the server's fields.
    public var id: String
    /// The message.
    public var message: YpChatMessage
    /// Its delivery.
    public var status: ChatDeliveryStatus

    /// An item.
    public init(id: String, message: YpChatMessage, status: ChatDeliveryStatus) {
        self.id = id
        self.message = message
        self.status = status
    }
}

/// One line of the console's output.
public enum ChatConsoleLine: Sendable, Equatable, Hashable {
    /// A command the person sent.
    case input(String)
    /// A line of a `commandResult`.
    case output(String)
    /// An `error` that answered a command.
    case error(String)
}

/// The image upload's progress.
public enum ChatUploadState: Sendable, Equatable, Hashable {
    /// Nothing is being uploaded.
    case idle
    /// An image of this many bytes is being uploaded for this partner.
    case uploading(byteCount: Int, toUserName: String)
    /// The last upload failed (the message is in ``ChatState/errorMessage``).
    case failed
}

/// What is loading now, one flag per operation the plan names.
public struct ChatLoadingFlags: Sendable, Equatable, Hashable {
    /// `restoreSession` is running.
    public var restoreSession = false
    /// A login waits for `loginSuccess`.
    public var login = false
    /// A search waits for `searchResults`.
    public var search = false
    /// The inbox waits for `inboxResults`.
    public var inbox = false
    /// The history waits for `historyResults`.
    public var history = false
    /// A feedback request is running (list, send, admin login/logout, delete).
    public var feedback = false
    /// `api/partners` is loading.
    public var partners = false
    /// `api/countries` is loading.
    public var countries = false
    /// An image is uploading.
    public var upload = false

    /// Nothing loading.
    public init() {}
}
