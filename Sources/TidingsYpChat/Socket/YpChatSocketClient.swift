import Foundation
import TidingsCore
import TidingsNet

/// The YpChat socket (the Android app's `SocketClient`): the plan's emits, and every server event
/// mapped to ``YpChatSocketEvent``, over TidingsNet's `SocketIOClient`.
///
/// Guarantees:
/// - The handshake carries the REST client's cookies (read from its jar at every connect and
///   reconnect), so the socket joins the express session `api/session` created.
/// - After every connect, and again after each reconnect, `setSessionId {expressSessionId}` goes out
///   with the pending session id (``setPendingSessionID(_:)``, else the id of the REST client's
///   session cookie) before ``YpChatSocketEvent/connect`` is reported.
/// - ``events`` reports everything in arrival order; an unknown event or a malformed payload is
///   reported (``YpChatSocketEvent/unknown(_:)``, ``YpChatSocketEvent/malformed(_:)``) and logged by
///   name, never ending the stream. Read it from one task; the stream ends after ``disconnect()``.
/// - Emits made while disconnected wait in `SocketIOClient`'s bounded buffer (see there).
public actor YpChatSocketClient {
    /// What the socket reports, in order (one reader).
    public nonisolated let events: AsyncStream<YpChatSocketEvent>
    private let continuation: AsyncStream<YpChatSocketEvent>.Continuation
    private let socket: SocketIOClient
    private let rest: YpChatRESTClient
    private let logger: TidingsLogger
    private var pendingSessionID: String?
    private var pump: Task<Void, Never>?
    private var isClosed = false
    /// Whether the pump has sent `setSessionId` for the connection up now (false again after a
    /// disconnect); ``connect()`` waits for it.
    private var connectionReady = false
    private var readyWaiters: [CheckedContinuation<Void, Never>] = []

    /// A socket to `rest`'s server (the base URL's root and its `socketPath`), sharing its cookies.
    public init(
        rest: YpChatRESTClient, options: YpChatSocketOptions = YpChatSocketOptions(),
        clock: any Clock<Duration> = ContinuousClock(), tls: TLSConfiguration = TLSConfiguration(),
        logger: TidingsLogger = .disabled
    ) {
        var root = URLComponents(url: rest.configuration.baseURL, resolvingAgainstBaseURL: false)
        root?.path = "/"
        let engine = EngineIOClient.Configuration(
            url: root?.url ?? rest.configuration.baseURL, path: rest.configuration.socketPath,
            transports: options.transports, version: options.engineIOVersion, timeout: options.timeout)
        self.init(
            rest: rest, connector: EngineIOClientConnector(configuration: engine, clock: clock, tls: tls),
            options: options, clock: clock, logger: logger)
    }

    /// A socket whose Engine.IO sessions `connector` opens (with `rest`'s cookies added when it is an
    /// `EngineIOClientConnector`): for the sandbox's in-process connector and custom transports.
    public init(
        rest: YpChatRESTClient, connector: any EngineIOConnector,
        options: YpChatSocketOptions = YpChatSocketOptions(),
        clock: any Clock<Duration> = ContinuousClock(), logger: TidingsLogger = .disabled
    ) {
        self.rest = rest
        self.logger = logger.scoped("ypchat.socket")
        socket = SocketIOClient(
            connector: YpChatCookieConnector(
                base: connector, cookies: rest.cookies, cookieURL: rest.configuration.baseURL),
            configuration: options.socketIOConfiguration, clock: clock)
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// The session id `setSessionId` sends from now on (nil: the REST client's session cookie's).
    public func setPendingSessionID(_ id: String?) { pendingSessionID = id }

    /// The id `setSessionId` sends now.
    public var sessionIDToSend: String? { pendingSessionID ?? rest.expressSessionID() }

    /// Whether the namespace is connected now.
    public var isConnected: Bool { get async { await socket.isConnected } }

    /// The transport carrying the connection now.
    public var activeTransport: EngineIOClient.ActiveTransport? { get async { await socket.activeTransport } }

    /// Connects (does nothing when connected) and returns once the server accepted and `setSessionId`
    /// went out, so no emit made after it can reach the server before `setSessionId`.
    ///
    /// - Throws: ``YpChatError/closed`` after ``disconnect()`` (its ``events`` have ended); what
    ///   `SocketIOClient.connect` throws (unreachable server, refused connect, timeout, cancellation).
    public func connect() async throws {
        guard !isClosed else { throw YpChatError.closed }
        if pump == nil {
            let socket = self.socket
            pump = Task { [weak self] in
                for await event in socket.events {
                    guard let self else { return }
                    await self.handle(event)
                }
            }
        }
        try await socket.connect()
        // The pump sends `setSessionId` when it sees the connect; an emit made before that would
        // overtake it (on the wire `login` came first).
        while true {
            let connected = await socket.isConnected
            guard connected, !isClosed, !connectionReady else { return }
            try Task.checkCancellation()
            await withTaskCancellationHandler {
                await withCheckedContinuation { readyWaiters.append($0) }
            } onCancel: {
                Task { await self.wakeReadyWaiters() }
            }
        }
    }

    private func wakeReadyWaiters() {
        let waiters = readyWaiters
        readyWaiters = []
        for waiter in waiters { waiter.resume() }
    }

    /// Disconnects for good: no reconnection follows, and ``events`` ends.
    public func disconnect() async {
        isClosed = true
        await socket.disconnect()
        pump?.cancel()
        pump = nil
        continuation.finish()
        wakeReadyWaiters()
    }

    private func handle(_ event: SocketIOClient.Event) async {
        switch event {
        case .connect:
            if let id = sessionIDToSend {
                do {
                    try await socket.emit("setSessionId", ["expressSessionId": .string(id)])
                } catch {
                    logger.notice("setSessionId not sent: \(error)")
                }
            }
            connectionReady = true
            wakeReadyWaiters()
            continuation.yield(.connect)
        case .disconnect(let reason):
            connectionReady = false
            wakeReadyWaiters()
            continuation.yield(.disconnect(Self.describe(reason)))
        case .reconnectAttempt:
            break
        case .connectError(let error):
            wakeReadyWaiters()
            continuation.yield(.connectError(error.description))
        case .event(let name, let arguments, _):
            let mapped = YpChatSocketEvent(name: name, arguments: arguments)
            switch mapped {
            case .unknown: logger.info("unknown event \(name)")
            case .malformed: logger.notice("malformed payload of \(name)")
            default: break
            }
            continuation.yield(mapped)
        }
    }

    private static func describe(_ reason: SocketIOClient.DisconnectReason) -> String {
        switch reason {
        case .clientDisconnect: "client disconnect"
        case .serverDisconnect: "server disconnect"
        case .transportError(let detail): detail
        }
    }

    // MARK: - Emits

    /// `login {userName, gender, age, country, expressSessionId}`.
    public func login(userName: String, gender: String, age: Int, country: String) async throws {
        var payload: [String: JSONValue] = [
            "userName": .string(userName), "gender": .string(gender), "age": .int(Int64(age)),
            "country": .string(country),
        ]
        if let id = sessionIDToSend { payload["expressSessionId"] = .string(id) }
        try await socket.emit("login", .object(payload))
    }

    /// `message {message, messageId, toUserName?}`: a text (without `toUserName`: a console command).
    public func sendMessage(_ text: String, messageId: String, toUserName: String? = nil) async throws {
        var payload: [String: JSONValue] = ["message": .string(text), "messageId": .string(messageId)]
        if let toUserName { payload["toUserName"] = .string(toUserName) }
        try await socket.emit("message", .object(payload))
    }

    /// `message {message: "", messageId, toUserName, isImage: true, imageUrl}`: an uploaded image.
    public func sendImage(url: URL, messageId: String, toUserName: String) async throws {
        try await socket.emit(
            "message",
            [
                "message": "", "messageId": .string(messageId), "toUserName": .string(toUserName), "isImage": true,
                "imageUrl": .string(url.absoluteString),
            ])
    }

    /// `requestConversation {withUserName}`.
    public func requestConversation(withUserName userName: String) async throws {
        try await socket.emit("requestConversation", ["withUserName": .string(userName)])
    }

    /// `userSearch {nameIncludes, minAge, maxAge, countries, genders}`.
    public func search(_ query: YpChatSearchQuery) async throws {
        try await socket.emit(
            "userSearch",
            [
                "nameIncludes": .string(query.nameIncludes), "minAge": .int(Int64(query.minAge)),
                "maxAge": .int(Int64(query.maxAge)), "countries": .array(query.countries.map(JSONValue.string)),
                "genders": .array(query.genders.map(JSONValue.string)),
            ])
    }

    /// `requestHistory` (no payload).
    public func requestHistory() async throws { try await socket.emit("requestHistory") }

    /// `requestOpenConversations` (no payload).
    public func requestOpenConversations() async throws { try await socket.emit("requestOpenConversations") }

    /// `blockUser {userName}`.
    public func blockUser(_ userName: String) async throws {
        try await socket.emit("blockUser", ["userName": .string(userName)])
    }

    /// `unblockUser {userName}`.
    public func unblockUser(_ userName: String) async throws {
        try await socket.emit("unblockUser", ["userName": .string(userName)])
    }
}
