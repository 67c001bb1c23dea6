import Foundation
import TidingsCore

/// The YpChat client's one writer of ``ChatState`` (the Android app's `ChatRepository`): it runs the
/// person's actions against REST and the socket and feeds every result and event through
/// ``ChatState/reduce(_:_:)``.
///
/// Guarantees:
/// - ``state`` changes only through the reducer, one event at a time, in this actor's order; every
///   subscriber of ``states()`` sees the newest state (a slow one skips intermediate states, never
///   the latest).
/// - Login: the profile is validated and saved, an express session is fetched when the client has
///   none, the socket connects if needed (handshake with the session cookie, then `setSessionId`),
///   then `login {userName, gender, age, country, expressSessionId}` goes out.
/// - Messages get a fresh UUID `messageId`; a text starting with `/` is a console command, emitted as
///   `message` without `toUserName` — also when typed inside a conversation: it never reaches the
///   partner, and its answer lands in the console.
/// - The inactivity timeout ticks once a second on the injected clock while logged in (in the
///   background too: a tick after a suspension counts every second that passed); at zero the state
///   resets locally even when `POST api/logout` fails.
/// - An `error` from the server while logged in is followed by `GET api/session`: when the server no
///   longer has the login (it logged a silent user out, or forgot the session), the client ends its
///   session too (socket closed, cookies cleared, state reset) and shows the server's words in
///   ``ChatLogoutReason/server(_:)``'s message. A failed check changes nothing.
/// - ``enterForeground()`` replaces the socket with a fresh connection, which sends `setSessionId`
///   again.
/// - The admin password is passed to `admin-login` and nowhere else: not into the state, an event or
///   a log record.
public actor YpChatRepository {
    /// Makes the socket for a REST client (a fresh one after each logout or foreground).
    public typealias SocketFactory = @Sendable (YpChatRESTClient) -> YpChatSocketClient

    /// The REST client (its cookie jar is the session).
    public nonisolated let rest: YpChatRESTClient
    /// The state now.
    public private(set) var state = ChatState()

    private let makeSocket: SocketFactory
    private let profileStore: YpChatProfileStore?
    private let makeMessageID: @Sendable () -> String
    private let logger: TidingsLogger
    private let startTicker: @Sendable (YpChatRepository) -> Task<Void, Never>
    private var socket: YpChatSocketClient?
    private var pump: Task<Void, Never>?
    private var ticker: Task<Void, Never>?
    private var expressSessionID: String?
    private var checkingSession = false
    private var subscribers: [UInt64: AsyncStream<ChatState>.Continuation] = [:]
    private var nextSubscriber: UInt64 = 0

    /// A repository over `rest`.
    ///
    /// - Parameters:
    ///   - rest: the REST client (and cookie jar).
    ///   - socket: makes the socket client for `rest` (by default ``YpChatSocketClient/init(rest:options:clock:tls:logger:)``).
    ///   - profileStore: where the saved profile lives (nil: not kept between launches).
    ///   - clock: the clock of the inactivity timeout (a `TestClock` in tests).
    ///   - messageID: makes message ids (UUIDs by default).
    ///   - logger: receives operation names and failures, never passwords or message text.
    public init<C: Clock>(
        rest: YpChatRESTClient, socket: SocketFactory? = nil, profileStore: YpChatProfileStore? = nil,
        clock: C = ContinuousClock(), messageID: @escaping @Sendable () -> String = { UUID().uuidString },
        logger: TidingsLogger = .disabled
    ) where C.Duration == Duration {
        self.rest = rest
        makeSocket = socket ?? { YpChatSocketClient(rest: $0) }
        self.profileStore = profileStore
        makeMessageID = messageID
        self.logger = logger.scoped("ypchat.repository")
        startTicker = { repository in Task { await Self.tick(repository, on: clock) } }
    }

    // MARK: - State

    /// A stream of states: the state now first, then each new one (the newest wins when the reader
    /// is slow). It ends when the reader stops reading or cancels.
    public func states() -> AsyncStream<ChatState> {
        let (stream, continuation) = AsyncStream.makeStream(of: ChatState.self, bufferingPolicy: .bufferingNewest(1))
        let id = nextSubscriber
        nextSubscriber += 1
        subscribers[id] = continuation
        continuation.yield(state)
        continuation.onTermination = { [weak self] _ in Task { await self?.unsubscribe(id) } }
        return stream
    }

    private func unsubscribe(_ id: UInt64) { subscribers[id] = nil }

    /// Applies `event` through the reducer and tells every subscriber; starts or stops the ticker
    /// with the login.
    func dispatch(_ event: ChatEvent) {
        state = ChatState.reduce(state, event)
        for continuation in subscribers.values { continuation.yield(state) }
        if state.isLoggedIn, ticker == nil {
            ticker = startTicker(self)
        } else if !state.isLoggedIn, let running = ticker {
            running.cancel()
            ticker = nil
        }
    }

    // MARK: - Session

    /// Loads the saved profile, the countries, the feedback admin status and `api/session`, then
    /// connects the socket (which sends `setSessionId`).
    public func restoreSession() async {
        dispatch(.action(.restoreSession))
        if let profileStore { dispatch(.result(.profileLoaded(await profileStore.load()))) }
        await loadCountries()
        do {
            dispatch(.result(.adminStatus(try await rest.feedbackAdminStatus().isAdmin)))
        } catch {
            logger.info("admin status not loaded: \(Self.kind(error))")
        }
        do {
            let session = try await rest.session()
            expressSessionID = rest.expressSessionID(from: session)
            dispatch(.result(.sessionLoaded(session)))
            try await connectSocket()
        } catch {
            fail(.restoreSession, error)
        }
        dispatch(.result(.restoreFinished))
    }

    /// Loads `api/countries` (the server's order).
    public func loadCountries() async {
        do {
            dispatch(.result(.countriesLoaded(try await rest.countries())))
        } catch {
            fail(.countries, error)
        }
    }

    /// Logs in with `profile` (see the type's guarantees); a profile that fails
    /// ``ChatProfile/validationError`` sets the error message and sends nothing.
    public func login(_ profile: ChatProfile) async {
        dispatch(.action(.login(profile)))
        guard profile.validationError == nil else { return }
        if let profileStore {
            do { try await profileStore.save(profile) } catch { logger.notice("profile not saved: \(error)") }
        }
        do {
            if expressSessionID == nil {
                let session = try await rest.session()
                expressSessionID = rest.expressSessionID(from: session)
            }
            try await connectSocket()
            guard let socket else { return }
            try await socket.login(
                userName: profile.trimmedUserName, gender: profile.gender, age: profile.age, country: profile.country)
        } catch {
            fail(.login, error)
        }
    }

    /// Logs out: `POST api/logout`, the socket closed, cookies cleared, the state reset keeping the
    /// saved profile and the countries.
    public func logout() async {
        dispatch(.action(.logout))
        await endSession(.person)
    }

    /// Why the ticker is not cancelled here: at the timeout this runs inside the ticker's task, and a
    /// cancelled task would cancel the logout request too. The reset below stops the ticker.
    private func endSession(_ reason: ChatLogoutReason) async {
        await dropSocket()
        do {
            try await rest.logout()
        } catch {
            logger.notice("logout request failed (\(Self.kind(error))); the local state resets anyway")
        }
        expressSessionID = nil
        dispatch(.result(.loggedOut(reason)))
    }

    /// The app came back to the foreground: a fresh socket connection (the old one may have died while
    /// suspended), which sends `setSessionId` again. Nothing happens without a session.
    public func enterForeground() async {
        guard socket != nil || state.isLoggedIn else { return }
        await dropSocket()
        do { try await connectSocket() } catch { fail(.connect, error) }
    }

    /// Closes the socket and ends every state stream, leaving the server session as it is (an app or
    /// terminal that quits without logging out).
    public func close() async {
        ticker?.cancel()
        ticker = nil
        await dropSocket()
        for continuation in subscribers.values { continuation.finish() }
        subscribers.removeAll()
    }

    // MARK: - Socket

    private func connectSocket() async throws {
        if let socket, await socket.isConnected { return }
        let current: YpChatSocketClient
        if let socket {
            current = socket
        } else {
            current = makeSocket(rest)
            socket = current
            pump = Task { [weak self] in
                for await event in current.events {
                    guard let self else { return }
                    await self.received(event, from: current)
                }
            }
        }
        await current.setPendingSessionID(expressSessionID)
        dispatch(.result(.connecting))
        try await current.connect()
    }

    private func dropSocket() async {
        let old = socket
        socket = nil
        pump?.cancel()
        pump = nil
        await old?.disconnect()
        if state.connection != .disconnected { dispatch(.socket(.disconnect("closed by the client"))) }
    }

    private func received(_ event: YpChatSocketEvent, from source: YpChatSocketClient) {
        guard source === socket else { return }
        dispatch(.socket(event))
        if case .error(let text) = event, state.isLoggedIn, !checkingSession {
            checkingSession = true
            // Its own task: the pump goes on delivering events while the check waits for REST.
            Task { await self.checkLogin(after: text) }
        }
    }

    /// Why ask REST rather than read the error's text: the plan's `error` carries only a message, and
    /// the session is what says whether the server still has the login.
    private func checkLogin(after text: String) async {
        defer { checkingSession = false }
        let session: SessionDto
        do { session = try await rest.session() } catch {
            logger.info("session check failed (\(Self.kind(error)))")
            return
        }
        guard !session.loggedIn, state.isLoggedIn else { return }
        logger.info("the server ended the login: logging out")
        await endSession(.server(text))
    }

    /// Runs an emit on the socket, reporting a missing socket or a failed emit in the state.
    private func emit(_ body: (YpChatSocketClient) async throws -> Void) async {
        guard let socket, state.isLoggedIn else {
            dispatch(.result(.failed(.emit, .key(.errorNotLoggedIn))))
            return
        }
        do { try await body(socket) } catch { fail(.emit, error) }
    }

    // MARK: - Chat

    /// Opens the conversation with `userName` and asks for its messages (`requestConversation`).
    public func openConversation(with userName: String) async {
        dispatch(.action(.openConversation(userName)))
        await emit { try await $0.requestConversation(withUserName: userName) }
    }

    /// Closes the open conversation.
    public func closeConversation() { dispatch(.action(.closeConversation)) }

    /// Sends `text`: a `/` command to the console (whatever is open), anything else to the open
    /// conversation's partner. Empty text does nothing.
    public func send(_ text: String) async {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { return }
        let id = makeMessageID()
        if trimmed.hasPrefix("/") {
            dispatch(.action(.command(trimmed, messageId: id)))
            await emit { try await $0.sendMessage(trimmed, messageId: id) }
            return
        }
        guard let partner = state.openConversation else { return }
        dispatch(.action(.send(ChatOutgoingMessage(messageId: id, toUserName: partner, text: trimmed))))
        await emit { try await $0.sendMessage(trimmed, messageId: id, toUserName: partner) }
    }

    /// Uploads `data` (at most 5 × 1024 × 1024 bytes, refused before uploading) and sends it to the
    /// open conversation's partner as an image message with its absolute URL.
    public func sendImage(_ data: Data, filename: String = "image.jpg", contentType: String = "image/jpeg") async {
        guard let partner = state.openConversation else { return }
        dispatch(.action(.uploadImage(byteCount: data.count, toUserName: partner)))
        guard data.count <= YpChatRESTClient.maximumImageBytes else { return }
        let url: URL
        do {
            url = try await rest.uploadImage(data, filename: filename, contentType: contentType)
        } catch {
            fail(.upload, error)
            return
        }
        dispatch(.result(.imageUploaded(url)))
        let id = makeMessageID()
        dispatch(.action(.send(ChatOutgoingMessage(messageId: id, toUserName: partner, text: "", imageURL: url))))
        await emit { try await $0.sendImage(url: url, messageId: id, toUserName: partner) }
    }

    /// Searches users (`userSearch`).
    public func search(_ query: YpChatSearchQuery) async {
        dispatch(.action(.search(query)))
        await emit { try await $0.search(query) }
    }

    /// Loads the inbox (`requestOpenConversations`).
    public func requestInbox() async {
        dispatch(.action(.requestInbox))
        await emit { try await $0.requestOpenConversations() }
    }

    /// Loads the history (`requestHistory`).
    public func requestHistory() async {
        dispatch(.action(.requestHistory))
        await emit { try await $0.requestHistory() }
    }

    /// Blocks `userName` (`blockUser`); the state follows the server's `userBlocked`.
    public func block(_ userName: String) async {
        dispatch(.action(.block(userName)))
        await emit { try await $0.blockUser(userName) }
    }

    /// Unblocks `userName` (`unblockUser`); the state follows the server's `userUnblocked`.
    public func unblock(_ userName: String) async {
        dispatch(.action(.unblock(userName)))
        await emit { try await $0.unblockUser(userName) }
    }

    /// Dismisses the error message.
    public func dismissError() { dispatch(.action(.dismissError)) }

    // MARK: - Feedback and partners

    /// Loads `api/feedback`.
    public func loadFeedback() async {
        dispatch(.action(.loadFeedback))
        do { dispatch(.result(.feedbackLoaded(try await rest.feedback()))) } catch { fail(.loadFeedback, error) }
    }

    /// Sends a feedback, then reloads the list.
    public func sendFeedback(_ feedback: FeedbackRequest) async {
        dispatch(.action(.sendFeedback(feedback)))
        do {
            try await rest.sendFeedback(feedback)
            dispatch(.result(.feedbackSent))
        } catch {
            fail(.sendFeedback, error)
        }
    }

    /// Logs in as feedback admin. `password` goes into the request body only.
    public func adminLogin(password: String) async {
        dispatch(.action(.adminLogin))
        do {
            dispatch(.result(.adminStatus(try await rest.adminLogin(password: password).isAdmin)))
        } catch {
            fail(.adminLogin, error)
        }
    }

    /// Logs out as feedback admin.
    public func adminLogout() async {
        dispatch(.action(.adminLogout))
        do {
            try await rest.adminLogout()
            dispatch(.result(.adminStatus(false)))
        } catch {
            fail(.adminLogout, error)
        }
    }

    /// Deletes feedback `id`; refused locally unless this session is a feedback admin.
    public func deleteFeedback(id: String) async {
        dispatch(.action(.deleteFeedback(id: id)))
        guard state.isFeedbackAdmin else {
            dispatch(.result(.failed(.deleteFeedback, .key(.errorUnauthorized))))
            return
        }
        do {
            try await rest.deleteFeedback(id: id)
            dispatch(.result(.feedbackDeleted(id: id)))
        } catch {
            fail(.deleteFeedback, error)
        }
    }

    /// Loads `api/partners`.
    public func loadPartners() async {
        dispatch(.action(.loadPartners))
        do { dispatch(.result(.partnersLoaded(try await rest.partners()))) } catch { fail(.partners, error) }
    }

    // MARK: - Timeout

    /// Ticks once a second while the task runs; each tick counts the whole seconds that passed.
    private static func tick<C: Clock>(_ repository: YpChatRepository, on clock: C) async
    where C.Duration == Duration {
        var last = clock.now
        while !Task.isCancelled {
            do { try await clock.sleep(until: last.advanced(by: .seconds(1)), tolerance: nil) } catch { return }
            let seconds = max(1, last.duration(to: clock.now).components.seconds)
            last = last.advanced(by: .seconds(seconds))
            await repository.elapsed(seconds: Int(clamping: seconds))
        }
    }

    private func elapsed(seconds: Int) async {
        guard state.isLoggedIn else { return }
        for _ in 0..<seconds where state.timeoutRemaining > 0 { dispatch(.tick) }
        if state.isLoggedIn, state.timeoutRemaining == 0 {
            logger.info("inactivity timeout: logging out")
            await endSession(.inactivity)
        }
    }

    // MARK: - Errors

    private func fail(_ operation: ChatOperation, _ error: any Error) {
        if error is CancellationError { return }
        logger.notice("\(operation.rawValue) failed: \(Self.kind(error))")
        dispatch(.result(.failed(operation, YpChatNotice(error: error))))
    }

    /// The error's kind for a log line (never its message, which may quote the server).
    private static func kind(_ error: any Error) -> String {
        (error as? any TidingsError)?.shortDescription ?? String(describing: type(of: error))
    }
}
