#if canImport(Observation)
    import Observation
    import TidingsCore

    /// The `@MainActor`, Observation-based face of an ``OpenMatesClient`` that UIs bind to: the chat list in the
    /// server's order, the sync and connection status, and the open chat's messages and draft, each observed like
    /// any `@Observable` property. Its parts carry the document's testability identifiers: ``chats`` is
    /// `chat-history`; ``status`` holds `syncing-indicator`, `offline-banner` and `connection-status`.
    ///
    /// Guarantees:
    /// - Every property is set on the main actor from the client's own reads (``OpenMatesClient/chatList()``,
    ///   ``OpenMatesClient/openChat(_:)``, ``OpenMatesClient/status``), refreshed by the client's `.storeChanged`,
    ///   `.hydrated`, `.chatsDeleted` and `.status` changes; a `.lagged` change re-reads everything, so nothing
    ///   missed stays stale.
    /// - A read that finishes after a newer one started is dropped: the open chat never goes back from loaded to
    ///   an older loading state.
    /// - Opening a chat never sends more than the client's deduplicated content request: re-reads after a store
    ///   change go through ``OpenMatesClient/openChat(_:)`` only while the content is not known to have failed.
    @MainActor @Observable
    public final class OpenMatesViewModel {
        /// Every stored chat in the server's order: pinned first, then the most recently edited (`chat-history`).
        public private(set) var chats: [OpenMatesChat] = []
        /// The sync and connection status (`syncing-indicator`, `offline-banner`, `connection-status`).
        public private(set) var status = OpenMatesSyncStatus()
        /// The chat the user opened, or nil.
        public private(set) var openChatID: String?
        /// What the open chat shows (loaded, loading or not available offline); nil when none is open.
        public private(set) var openChatContent: OpenMatesClient.ChatContent?
        /// Why the open chat's content could not be fetched (a `partial_error`, a request without an answer); the
        /// stored messages still show. Cleared by the next ``open(_:)``.
        public private(set) var openChatError: OpenMatesError?
        /// The last error reading the store, for the UI.
        public private(set) var lastError: OpenMatesError?

        /// The client the model reads and forwards to.
        @ObservationIgnored public let client: OpenMatesClient
        @ObservationIgnored private var observer: Task<Void, Never>?
        /// Serials of reads of the list and of the open chat: a read applies only if no later one applied first.
        @ObservationIgnored private var listReads = OpenMatesReadSerials()
        @ObservationIgnored private var chatReads = OpenMatesReadSerials()

        /// A model over `client`, empty until ``start()``.
        public init(client: OpenMatesClient) { self.client = client }

        /// The open chat's messages, oldest first, with their roles (`user`, `assistant`); empty when none is open.
        public var messages: [OpenMatesMessage] {
            switch openChatContent {
            case .loaded(let messages), .loading(let messages), .notAvailableOffline(let messages): messages
            case nil: []
            }
        }

        /// Whether the open chat's stored messages are not its final state and its content was requested.
        public var isLoadingOpenChat: Bool {
            if case .loading = openChatContent { return openChatError == nil }
            return false
        }

        /// The open chat's stored metadata (title, pinned, versions), when it is stored.
        public var openChat: OpenMatesChat? { chats.first { $0.chatID == openChatID } }

        /// The editor's draft of the open chat as the server stores it (encrypted; its version is `draft_v`).
        public var draft: String? { openChat?.encryptedDraft }

        /// Follows the client's changes, reads the current state and starts the client (call once, e.g. from the
        /// root view's `.task`). The returned task ends once the first reads are applied.
        @discardableResult
        public func start() -> Task<Void, Never> {
            guard observer == nil else { return Task {} }
            // Subscribed before the first read, so no change between the read and the subscription is lost.
            let changes = client.changes()
            observer = Task { [weak self] in
                for await change in changes {
                    guard let self else { return }
                    await self.handle(change)
                }
            }
            return Task {
                status = await client.status
                await refreshAll()
                await client.start()
            }
        }

        /// Stops following the client (the client keeps running).
        public func stop() {
            observer?.cancel()
            observer = nil
        }

        /// Opens a chat: its stored messages, with a loading state while its content is fetched
        /// (``OpenMatesClient/openChat(_:)``). The returned task ends once the first read is applied.
        @discardableResult
        public func open(_ chatID: String) -> Task<Void, Never> {
            openChatID = chatID
            openChatContent = nil
            openChatError = nil
            return Task { await refreshOpenChat() }
        }

        /// Closes the open chat.
        public func closeChat() {
            openChatID = nil
            openChatContent = nil
            openChatError = nil
            chatReads.skipPending()
        }

        private func handle(_ change: OpenMatesClient.Change) async {
            switch change {
            case .status(let status): self.status = status
            case .storeChanged: await refreshAll()
            case .hydrated(let chatIDs):
                if let openChatID, chatIDs.contains(openChatID) { await refreshOpenChat() }
            case .chatsDeleted(let chatIDs):
                if let openChatID, chatIDs.contains(openChatID) { closeChat() }
                await refreshList()
            case .failure(let error):
                if let openChatID, error.chatIDs.contains(openChatID) { openChatError = error }
            case .lagged:
                status = await client.status
                await refreshAll()
            case .actionSucceeded, .actionFailed: break
            }
        }

        private func refreshAll() async {
            await refreshList()
            if openChatID != nil { await refreshOpenChat() }
        }

        private func refreshList() async {
            let serial = listReads.begin()
            let result: Result<[OpenMatesChat], OpenMatesError>
            do { result = .success(try await client.chatList()) } catch { result = .failure(error) }
            guard listReads.finish(serial) else { return }
            switch result {
            case .success(let chats): self.chats = chats
            case .failure(let error): lastError = error
            }
        }

        private func refreshOpenChat() async {
            // A chat whose content failed is not asked for again by every store change; the next open asks.
            guard let chatID = openChatID, openChatError == nil else { return }
            let serial = chatReads.begin()
            let result: Result<OpenMatesClient.ChatContent, OpenMatesError>
            do { result = .success(try await client.openChat(chatID)) } catch { result = .failure(error) }
            guard chatReads.finish(serial), openChatID == chatID else { return }
            switch result {
            case .success(let content): openChatContent = content
            case .failure(let error): openChatError = error
            }
        }
    }

    /// Orders overlapping asynchronous reads: each gets a serial when it starts, and its result applies only if no
    /// read that started later has applied already.
    struct OpenMatesReadSerials {
        private var started = 0
        private var applied = 0

        /// A new read starts; its serial.
        mutating func begin() -> Int {
            started += 1
            return started
        }

        /// Whether the read `serial` may apply its result (and records that it did).
        mutating func finish(_ serial: Int) -> Bool {
            guard serial > applied else { return false }
            applied = serial
            return true
        }

        /// Drops every read under way.
        mutating func skipPending() { applied = started }
    }
#endif
