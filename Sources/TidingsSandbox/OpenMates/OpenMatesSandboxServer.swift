import Foundation
import TidingsCore
import TidingsOpenMates

/// An in-process OpenMates server with the phased-sync semantics of the public source (seed 004 and the
/// README's OpenMates facts), for tests, previews and `tidings sandbox openmates`.
///
/// Semantics, for one user:
/// - `phased_sync_request` `all`: `phase_1_last_chat_ready` (the newest parent, `messages: null`, the next ≤ 9
///   parents and their direct sub-chats as `recent_chat_metadata`, suggestions, daily inspirations),
///   `phase_1b_chat_content_ready` (content of those ≤ 10 parents; `messages: null` for a chat the client
///   has at the same `messages_v`; embeds and keys), `phase_2_last_20_chats_ready` (metadata only, up to 100
///   chats, omitting chats the client has at equal or newer `messages_v` and `title_v`), then
///   `phased_sync_complete`. `phase3` sends `background_message_sync` batches of 10 (`batch_number`,
///   `is_last_batch`) for the chats after the first 10; nothing else asks for phase 3.
/// - `sync_status_request` / `request_cache_status` → `sync_status_response` {is_primed, chat_count, timestamp}.
/// - `request_chat_content_batch` → `chat_content_batch_response` for the chats the server has; a chat it does
///   not have (deleted) is left out of the answer entirely (no messages, no versions, not in `partial_error`),
///   and the variant's failures are named in `partial_error`.
/// - `ping` → `pong`; an unknown type is answered with nothing, as the reference server does (``ignoredTypes``).
/// - The actions in the reference server's events and answers (`delete_message`, `update_chat`,
///   `encrypted_chat_metadata`, `chat_message_added`: see `action(_:type:payload:)`); an action on a chat the
///   user does not have is refused with `error` {message, chat_id}.
/// - Another device's actions (``postMessageFromOtherDevice(chatID:role:)``, ``deleteChat(_:)``) push
///   `new_chat_message` / `chat_deleted` to every open connection.
///
/// Content is really encrypted, as the web client writes it: each seeded chat gets a random AES-256 key,
/// wrapped by ``masterKey`` into the chat's `encrypted_chat_key`; titles and message contents are "OM" blobs
/// (`OpenMatesContentBlob`) under that key. A client that holds ``masterKey`` decrypts them; the server never
/// reads them. Seeded plaintexts are ``seededTitle(chatID:)`` and ``seededMessage(chatID:index:)``.
///
/// ``variant`` switches turn it into the other servers the client must survive (order, missing phases,
/// messages as strings, thin events, duplicates, a disconnect between phases, a cold cache).
public actor OpenMatesSandboxServer {
    final class Session: Sendable {
        let id: Int
        let continuation: AsyncThrowingStream<String, any Error>.Continuation
        init(id: Int, continuation: AsyncThrowingStream<String, any Error>.Continuation) {
            self.id = id
            self.continuation = continuation
        }
    }

    /// The chats, by ID.
    public internal(set) var chats: [String: OpenMatesSandboxChat] = [:]
    /// New-chat suggestions phase 1 sends.
    public var suggestions: [[String: JSONValue]] = [["id": "suggestion-1", "encrypted_suggestion": "s1"]]
    /// Daily inspirations phase 1 sends.
    public var dailyInspirations: [[String: JSONValue]] = [["inspiration_id": "inspiration-1"]]
    /// The switches in force.
    public var variant = OpenMatesSandboxVariant()
    /// Every frame received, in order.
    public internal(set) var received: [OpenMatesEnvelope] = []
    /// Every frame sent, in order.
    public internal(set) var sent: [OpenMatesEnvelope] = []
    /// Every action that changed the server's data, in order: `store_message:chat:message`,
    /// `delete_message:chat:message`, `update_chat:chat:pinned`, `hide:chat`, `unhide:chat` (an action resent
    /// after it was applied changes nothing and is not listed again).
    public internal(set) var appliedActions: [String] = []
    /// Every `chat_message_added` that started an AI task, as `chat_id:message_id`, in order (the real server is
    /// not idempotent here: a resend is listed again).
    public internal(set) var aiRequests: [String] = []
    /// Frame types received that the server does not know and answered nothing to, in order.
    public internal(set) var ignoredTypes: [String] = []
    /// Connections accepted so far.
    public private(set) var connectionsAccepted = 0

    var sessions: [Int: Session] = [:]
    var nextSessionID = 0
    var disconnectedOnce = false
    /// The `total_chat_count` the last phase 2 carried (``OpenMatesSandboxVariant/lateTotalChatCount``).
    var lastReportedTotal: Int?
    /// The server's clock of Unix seconds, moved by posts.
    var now = 1_700_000_000

    /// The session token (a cookie value or bearer token) the WebSocket endpoint accepts.
    public nonisolated let token: String
    /// The user's master key, which wraps every chat key (what the app gets at login in the real service).
    public nonisolated let masterKey: TidingsCrypto.SymmetricKey
    /// Each chat's key in clear, by chat ID, once used (for tests; the real server never has them).
    public internal(set) var chatKeys: [String: TidingsCrypto.SymmetricKey] = [:]

    /// The default master key: fixed and public (SHA-256 of a label), so two sandboxes seeded alike send
    /// identical bytes and tests can compare stores across servers. Never a real user's key.
    public nonisolated static let defaultMasterKey: TidingsCrypto.SymmetricKey = {
        // 32 bytes from SHA-256 always make a valid AES-256 key; the fallback is unreachable.
        (try? TidingsCrypto.SymmetricKey(
            bytes: TidingsCrypto.SHA256.hash(Array("tidings sandbox openmates master key".utf8)))) ?? .random()
    }()

    /// Creates an empty server accepting `token`, wrapping chat keys with `masterKey`.
    public init(token: String = "sandbox-session-token", masterKey: TidingsCrypto.SymmetricKey = defaultMasterKey) {
        self.token = token
        self.masterKey = masterKey
    }

    /// Replaces the switches.
    public func setVariant(_ variant: OpenMatesSandboxVariant) { self.variant = variant }

    /// Adds or replaces a chat.
    public func put(_ chat: OpenMatesSandboxChat) { chats[chat.chatID] = chat }

    /// Fills the server with `parents` chats (newest first: `chat-000` is the newest) of `messagesEach`
    /// messages, and `subChatsOfNewest` sub-chats under the newest parent.
    public func seed(parents: Int, messagesEach: Int = 3, subChatsOfNewest: Int = 0) {
        for index in 0..<parents {
            let id = String(format: "chat-%03d", index)
            put(makeChat(id, lastEdited: now - index * 60, messages: messagesEach))
        }
        for index in 0..<subChatsOfNewest {
            put(makeChat("chat-000-sub-\(index)", lastEdited: now - 30 - index, messages: 1, parent: "chat-000"))
        }
    }

    func makeChat(_ id: String, lastEdited: Int, messages count: Int, parent: String? = nil) -> OpenMatesSandboxChat {
        let messages: [[String: JSONValue]] = (0..<count).map { index in
            [
                "message_id": .string("\(id)-m\(index)"), "chat_id": .string(id),
                "role": .string(index % 2 == 0 ? "user" : "assistant"),
                "created_at": .int(Int64(lastEdited - count + index)),
                "encrypted_content": .string(seal(Self.seededMessage(chatID: id, index: index), chatID: id)),
            ]
        }
        var chat = OpenMatesSandboxChat(
            chatID: id, messagesV: count, encryptedTitle: seal(Self.seededTitle(chatID: id), chatID: id),
            lastEdited: lastEdited, parentChatID: parent, messages: messages)
        chat.encryptedChatKey = wrappedChatKey(id)
        if count > 0 { (chat.embeds, chat.embedKeys) = seededEmbed(chatID: id) }
        return chat
    }

    /// Opens a connection to the server (in memory; the WebSocket endpoint calls this for each socket).
    public func openChannel() -> OpenMatesChannel {
        let (stream, continuation) = AsyncThrowingStream<String, any Error>.makeStream(bufferingPolicy: .unbounded)
        nextSessionID += 1
        connectionsAccepted += 1
        let session = Session(id: nextSessionID, continuation: continuation)
        sessions[session.id] = session
        let id = session.id
        return OpenMatesChannel(
            inbound: stream,
            send: { [weak self] text in
                guard let self else { throw OpenMatesError.connectionLost }
                try await self.receive(text, session: id)
            },
            close: { [weak self] in await self?.closeSession(id) })
    }

    /// How many connections are open.
    public var openConnectionCount: Int { sessions.count }

    /// Cuts every connection, as a network outage would.
    public func dropAllConnections() {
        for id in Array(sessions.keys) { closeSession(id) }
    }

    func closeSession(_ id: Int) {
        guard let session = sessions.removeValue(forKey: id) else { return }
        session.continuation.finish()
    }

    /// Ends a cold cache's re-warm, as the public server's warming task does: pushes to every connection the thin
    /// phase events (`phase_1_last_chat_ready` {chat_id}, `phase_2_last_20_chats_ready` and
    /// `phase_3_last_100_chats_ready` {chat_count}), then `cache_primed` {status: full_sync_ready}; syncs asked
    /// for from then on are answered from the warm cache.
    public func primeCache() {
        variant.coldCache = false
        let count = Int64(min(chats.count, 100))
        for id in sessions.keys.sorted() {
            if let last = orderedParents.first {
                emit(id, "phase_1_last_chat_ready", ["chat_id": .string(last.chatID)])
            }
            emit(id, "phase_2_last_20_chats_ready", ["chat_count": .int(min(count, 20))])
            emit(id, "phase_3_last_100_chats_ready", ["chat_count": .int(count)])
            emit(id, "cache_primed", ["status": "full_sync_ready"])
        }
    }

    /// Another device posts a message: the chat's version moves and every connection gets `new_chat_message`.
    @discardableResult
    public func postMessageFromOtherDevice(chatID: String, role: String = "user") -> String? {
        guard var chat = chats[chatID] else { return nil }
        now += 1
        let id = "\(chatID)-m\(chat.messages.count)-\(now)"
        let message: [String: JSONValue] = [
            "message_id": .string(id), "chat_id": .string(chatID), "role": .string(role),
            "created_at": .int(Int64(now)),
            "encrypted_content": .string(seal("Posted from another device as \(id)", chatID: chatID)),
        ]
        chat.messages.append(message)
        chat.messagesV += 1
        chat.lastEdited = now
        chats[chatID] = chat
        for session in sessions.keys.sorted() {
            emit(
                session, "new_chat_message",
                [
                    "chat_id": .string(chatID), "message": .object(message),
                    "versions": ["messages_v": .int(Int64(chat.messagesV))],
                    "last_edited_overall_timestamp": .int(Int64(now)),
                ])
        }
        return id
    }

    /// Deletes a chat and pushes `chat_deleted` {chat_id, tombstone: true} to every open connection — only to
    /// those, as the real server does: a client that is offline then gets no `chat_deleted`; it learns of the
    /// deletion from a lower `total_chat_count` and from content answers that leave the chat out.
    public func deleteChat(_ chatID: String) {
        guard chats.removeValue(forKey: chatID) != nil else { return }
        for session in sessions.keys.sorted() {
            emit(session, "chat_deleted", ["chat_id": .string(chatID), "tombstone": true])
        }
    }

    /// Ends the session on every connection: pushes `force_logout` {reason}.
    public func forceLogout(reason: String = "session revoked") {
        for session in sessions.keys.sorted() { emit(session, "force_logout", ["reason": .string(reason)]) }
    }

    /// Sends one frame to a session (messages rewritten as JSON strings when the variant says so).
    func emit(_ session: Int, _ type: String, _ payload: [String: JSONValue]) {
        guard let target = sessions[session] else { return }
        let payload = variant.messagesAsJSONStrings ? Self.stringifyMessages(payload) : payload
        let envelope = OpenMatesEnvelope(type: type, payload: payload)
        sent.append(envelope)
        target.continuation.yield(envelope.text)
    }

    static func stringifyMessages(_ value: [String: JSONValue]) -> [String: JSONValue] {
        var result: [String: JSONValue] = [:]
        for (key, member) in value {
            switch (key, member) {
            case ("messages", .array(let elements)), ("message", .array(let elements)):
                result[key] = .array(elements.map { $0.objectValue != nil ? .string($0.jsonString()) : $0 })
            case ("messages_by_chat_id", .object(let byChat)):
                result[key] = .object(
                    byChat.mapValues { .object(stringifyMessages(["messages": $0]))["messages"] ?? $0 })
            case (_, .object(let members)): result[key] = .object(stringifyMessages(members))
            case (_, .array(let elements)):
                result[key] = .array(elements.map { $0.objectValue.map { .object(stringifyMessages($0)) } ?? $0 })
            default: result[key] = member
            }
        }
        return result
    }
}
