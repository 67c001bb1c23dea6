import Foundation
import TidingsCore
import TidingsKecalek

/// An in-process Kecalek server with the incremental-sync document's semantics, for tests, the demo
/// and the CLI.
///
/// It keeps conversations with members and per-conversation AES-256-GCM keys, messages (sealed with
/// `KecalekAESGCMCipher`), deletion tombstones, reactions, pins and read receipts, and speaks the
/// request/response/notification protocol over in-process channels (``transport(userID:)``) or a real
/// loopback WebSocket (``KecalekSandboxWebSocketServer``).
///
/// Semantics:
/// - `get_messages` without `after_ts`: the newest `limit` messages, `offset` counting back from the
///   newest, oldest first. With `after_ts`: the oldest `limit` messages created after it (`>`, or `>=`
///   when ``comparison`` says so), `offset` counting forward. `total_count` is the conversation's size.
/// - `get_deleted_since`: IDs of messages deleted after `since`.
/// - `mark_read`: records the reader in `read_by` and notifies every connected member (`messages_read`);
///   an empty `message_ids` is refused with status `bad_request`.
/// - Posting, reacting, pinning and deleting notify every connected member of the conversation.
/// - Faults (``inject(_:on:times:)``): drop the connection, never answer, answer late, or answer with an
///   error status, for a given request type.
///
/// Time: `created_at` comes from a virtual wall clock (``advanceTime(by:)``), which moves one millisecond
/// per message; at ``Variant/Resolution/second`` every message of one second shares its timestamp.
/// Delays of injected faults run on the injected `clock`.
///
/// ``setVariant(_:)`` turns it into another server the document allows (timestamp resolution, page order
/// with `after_ts`, `offset` ignored, `>=`, fewer notifications, a page-size cap).
public actor KecalekSandboxServer {
    /// How `after_ts` is compared with `created_at`.
    public enum Comparison: Sendable {
        /// `created_at > after_ts`, as the document says.
        case greater
        /// `created_at >= after_ts`: the newest cached message comes back again.
        case greaterOrEqual
    }

    /// A fault injected into the handling of a request type.
    public enum Fault: Sendable, Hashable {
        /// Close the connection instead of answering.
        case dropConnection
        /// Never answer.
        case neverAnswer
        /// Answer after `Duration` on the server's clock.
        case delay(Duration)
        /// Answer with this status (and an error text).
        case errorStatus(String)
    }

    /// One request the server received.
    public struct LoggedRequest: Sendable, Hashable, CustomStringConvertible {
        /// The user of the connection.
        public var userID: String
        /// The request.
        public var request: KecalekRequest
        /// Bytes of the request frame.
        public var bytes: Int

        /// The request type.
        public var type: String { request.type }
        /// `after_ts` or `since`, when sent.
        public var since: String? { (request.parameters["after_ts"] ?? request.parameters["since"])?.stringValue }

        public var description: String {
            var text = "\(userID) \(type)"
            if let conversation = request.parameters["conversation_id"]?.stringValue { text += " \(conversation)" }
            if let since { text += " since=\(since)" }
            if let offset = request.parameters["offset"]?.intValue, offset > 0 { text += " offset=\(offset)" }
            return text
        }
    }

    struct StoredMessage {
        var wire: KecalekWireMessage
        /// Sent instead of the encoded wire message (malformed-message tests).
        var rawOverride: JSONValue?
        var json: JSONValue { rawOverride ?? wire.json }
    }

    struct Conversation {
        var members: [String]
        var messages: [StoredMessage] = []
        var tombstones: [(messageID: String, deletedAt: KecalekTimestamp)] = []
    }

    final class Session {
        let id: Int
        let userID: String
        let continuation: AsyncThrowingStream<Data, any Error>.Continuation
        var open = true

        init(id: Int, userID: String, continuation: AsyncThrowingStream<Data, any Error>.Continuation) {
            self.id = id
            self.userID = userID
            self.continuation = continuation
        }
    }

    /// `>` or `>=` for `after_ts` (also set by ``setVariant(_:)``).
    public var comparison: Comparison = .greater
    /// Which of the servers the document allows this one is (``setVariant(_:)``).
    public internal(set) var variant: Variant = .standard
    /// How `created_at` and `read_at` are written.
    public var timestampStyle: KecalekTimestamp.Style = .fractional
    /// Every request received, in order.
    public private(set) var requestLog: [LoggedRequest] = []
    /// Bytes of every frame the server sent (responses and notifications).
    public private(set) var bytesSent = 0
    /// IDs a `mark_read` carried that the reader sent or had already read: a client should never send them.
    public internal(set) var redundantReadMarks: [String] = []
    /// Connections accepted so far.
    public private(set) var connectionsAccepted = 0

    /// The cipher the server seals with; holds every conversation's key.
    public nonisolated let cipher: KecalekAESGCMCipher
    private nonisolated let keys: KeyStore
    private let clock: any Clock<Duration>
    var wallClock: Int64
    var conversations: [String: Conversation] = [:]
    var sessions: [Int: Session] = [:]
    private var nextSessionID = 0
    var nextMessageNumber = 0
    private var faults: [String: [(fault: Fault, remaining: Int)]] = [:]

    /// Creates an empty server.
    ///
    /// - Parameters:
    ///   - clock: Runs the delays of injected faults.
    ///   - start: The virtual wall time of the first message.
    public init(
        clock: any Clock<Duration>, start: KecalekTimestamp = KecalekTimestamp(microseconds: 1_771_192_800_000_000)
    ) {
        self.clock = clock
        self.wallClock = start.microseconds
        let keys = KeyStore()
        self.keys = keys
        self.cipher = KecalekAESGCMCipher { keys.key(for: $0) }
    }

    // MARK: Setup

    /// Creates (or replaces) a conversation and returns its key.
    @discardableResult
    public func createConversation(_ conversationID: String, members: [String], key: TidingsCrypto.SymmetricKey? = nil)
        -> TidingsCrypto.SymmetricKey
    {
        let key = key ?? TidingsCrypto.SymmetricKey.random()
        keys.set(key, for: conversationID)
        conversations[conversationID] = Conversation(members: members)
        return key
    }

    /// The key of a conversation, for clients of the sandbox.
    public nonisolated func key(for conversationID: String) -> TidingsCrypto.SymmetricKey? {
        keys.key(for: conversationID)
    }

    /// The IDs of every conversation, sorted.
    public var conversationIDs: [String] { conversations.keys.sorted() }

    /// The current virtual wall time.
    public var now: KecalekTimestamp { KecalekTimestamp(microseconds: wallClock, style: timestampStyle) }

    /// Moves the virtual wall time forward (five minutes between two opens of a conversation).
    public func advanceTime(by duration: Duration) {
        let (seconds, attoseconds) = duration.components
        wallClock += max(0, seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
    }

    /// Sets how `after_ts` is compared.
    public func setComparison(_ comparison: Comparison) {
        self.comparison = comparison
        variant.comparison = comparison
    }

    /// Sets how timestamps are written.
    public func setTimestampStyle(_ style: KecalekTimestamp.Style) { timestampStyle = style }

    /// A bearer token that authenticates `userID` on the WebSocket endpoint (the same one each time).
    public nonisolated func token(for userID: String) -> String { keys.token(for: userID) }

    /// The user a token authenticates, or nil.
    public nonisolated func user(forToken token: String) -> String? { keys.user(forToken: token) }

    /// Makes the next `times` requests of `type` fail with `fault`.
    public func inject(_ fault: Fault, on type: String, times: Int = 1) {
        faults[type, default: []].append((fault, times))
    }

    /// Removes every injected fault.
    public func clearFaults() { faults.removeAll() }

    /// Forgets the request log.
    public func clearLog() { requestLog.removeAll() }

    // MARK: Connections

    /// A transport whose connections are in-process channels to this server, as `userID`.
    public nonisolated func transport(userID: String) -> any KecalekTransport {
        InProcessTransport(server: self, userID: userID)
    }

    /// Opens a session for `userID` and returns its channel.
    public func openChannel(userID: String) -> KecalekChannel {
        let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream(bufferingPolicy: .unbounded)
        nextSessionID += 1
        connectionsAccepted += 1
        let session = Session(id: nextSessionID, userID: userID, continuation: continuation)
        sessions[session.id] = session
        let id = session.id
        return KecalekChannel(
            inbound: stream,
            send: { [weak self] frame in
                guard let self else { throw KecalekError.connectionLost }
                try await self.receive(frame, session: id)
            },
            close: { [weak self] in await self?.closeSession(id) })
    }

    /// Closes every open connection, as a network outage would.
    public func dropAllConnections() {
        for id in Array(sessions.keys) { closeSession(id) }
    }

    /// How many connections are open.
    public var openConnectionCount: Int { sessions.count }

    func closeSession(_ id: Int) {
        guard let session = sessions.removeValue(forKey: id) else { return }
        session.open = false
        session.continuation.finish()
    }

    /// Handles one frame from a session.
    ///
    /// - Throws: ``KecalekError/connectionLost`` when the session is closed.
    func receive(_ frame: Data, session id: Int) async throws {
        guard let session = sessions[id] else { throw KecalekError.connectionLost }
        let request: KecalekRequest
        do {
            request = try KecalekRequest(frame: frame)
        } catch {
            deliver(
                JSONValue.object(["type": "error", "status": "bad_request", "error": "malformed frame"]).jsonData(
                    sortedKeys: true),
                to: session)
            return
        }
        requestLog.append(LoggedRequest(userID: session.userID, request: request, bytes: frame.count))
        if let fault = takeFault(for: request.type) {
            switch fault {
            case .dropConnection:
                closeSession(id)
                return
            case .neverAnswer:
                return
            case .errorStatus(let status):
                deliver(
                    KecalekResponse(type: request.type, requestID: request.requestID, status: status, error: "injected")
                        .encoded(), to: session)
                return
            case .delay(let duration):
                let response = handle(request, userID: session.userID)
                Task { [clock] in
                    try? await clock.sleep(for: duration)
                    self.deliverIfOpen(response.encoded(), sessionID: id)
                }
                return
            }
        }
        deliver(handle(request, userID: session.userID).encoded(), to: session)
    }

    private func deliverIfOpen(_ frame: Data, sessionID: Int) {
        guard let session = sessions[sessionID] else { return }
        deliver(frame, to: session)
    }

    func deliver(_ frame: Data, to session: Session) {
        guard session.open else { return }
        bytesSent += frame.count
        session.continuation.yield(frame)
    }

    func notify(_ conversationID: String, _ notification: KecalekNotification) {
        guard let members = conversations[conversationID]?.members, sends(notification) else { return }
        let frame = notification.encoded()
        for session in sessions.values.sorted(by: { $0.id < $1.id }) where members.contains(session.userID) {
            deliver(frame, to: session)
        }
    }

    private func takeFault(for type: String) -> Fault? {
        guard var list = faults[type], !list.isEmpty else { return nil }
        let fault = list[0].fault
        list[0].remaining -= 1
        if list[0].remaining <= 0 { list.removeFirst() }
        faults[type] = list
        return fault
    }
}

/// Conversation keys shared by the server actor and its nonisolated cipher.
final class KeyStore: Sendable {
    private struct State {
        var keys: [String: TidingsCrypto.SymmetricKey] = [:]
        var tokens: [String: String] = [:]
    }
    private let state = LockedState(State())

    func key(for conversationID: String) -> TidingsCrypto.SymmetricKey? {
        state.withLock { locked in locked.keys[conversationID] }
    }
    func set(_ key: TidingsCrypto.SymmetricKey, for conversationID: String) {
        state.withLock { locked in locked.keys[conversationID] = key }
    }

    func token(for userID: String) -> String {
        state.withLock { locked in
            if let existing = locked.tokens.first(where: { $0.value == userID }) { return existing.key }
            let token = TidingsCrypto.SecureRandom.bytes(16).map { String(format: "%02x", $0) }.joined()
            locked.tokens[token] = userID
            return token
        }
    }

    func user(forToken token: String) -> String? { state.withLock { locked in locked.tokens[token] } }
}

/// Connections to a ``KecalekSandboxServer`` inside the process.
struct InProcessTransport: KecalekTransport {
    let server: KecalekSandboxServer
    let userID: String

    func connect() async throws -> KecalekChannel {
        await server.openChannel(userID: userID)
    }
}
