import Foundation
import TidingsCore
import TidingsOpenMates
import TidingsSandbox

/// The demo's OpenMates part.
let openMatesDemoPart = DemoPart(
    name: "openmates",
    title: "OpenMates: phased sync, a cold start from disk, hydration, an offline session and an offline prefetch",
    run: { try await openMatesDemo() })

/// One person's OpenMates client against the in-process sandbox on a virtual clock (the same output every run):
/// a first phased sync into a store file, a relaunch that shows the chats from disk before the network, a
/// metadata-only chat hydrated when opened, actions taken offline that replay when the connection is back (one
/// of them refused by the server and undone), and an offline prefetch pass (its 2 s spacing on the virtual clock).
func openMatesDemo() async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tidings-demo-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("openmates.sqlite").path
    let server = OpenMatesSandboxServer()
    await server.seed(parents: 14, messagesEach: 3, subChatsOfNewest: 1)
    let endpoint = try OpenMatesSandboxWebSocketServer(server: server)
    defer { endpoint.stop() }
    let network = OpenMatesDemoNetwork(
        endpoint.inProcessTransport(token: server.token))

    // 1. First launch: an empty store, one phased sync.
    do {
        let session = try await OpenMatesDemoSession(path: path, network: network)
        await session.client.start()
        try await session.untilSynced()
        let received = await session.client.traffic.received
        let phases = ["phase_1_last_chat_ready", "phase_1b_chat_content_ready", "phase_2_last_20_chats_ready"]
        print("First launch, empty store: phased_sync_request (phase \"all\") sent.")
        print(
            "  received \(phases.map { "\($0) ×\(received[$0] ?? 0)" }.joined(separator: ", ")), phased_sync_complete")
        let chats = try session.store.chatList()
        let metadataOnly = try chats.filter { try session.store.chat($0.chatID)?.content.isMetadataOnly ?? true }
        print(
            "  store: \(chats.count) chats; \(chats.count - metadataOnly.count) with their messages, "
                + "\(metadataOnly.count) metadata-only (phase 1b fills at most 10 parents).")
        print("  sync indicator: \(await session.client.status.syncingIndicator ? "on" : "off")")
        await session.close()
    }

    // 2. Relaunch: the list and the first chats' messages from disk before any frame, then the sync.
    let session = try await OpenMatesDemoSession(path: path, network: network)
    let framesBefore = await server.received.count
    let start = try await session.client.coldStart()
    print("")
    print(
        "Relaunch, before the network: \(start.chats.count) chats and the messages of the first "
            + "\(start.messagesByChat.count) from disk (\(await server.received.count - framesBefore) frames sent).")
    await session.client.start()
    try await session.untilSynced()
    let delta = await server.sent.filter { $0.type == "phase_2_last_20_chats_ready" }.last
    print(
        "  phased sync again with the stored versions: phase 2 carries only the "
            + "\(delta?.payload["chats"]?.arrayValue?.count ?? 0) chats not up to date (the metadata-only ones); "
            + "sync complete.")

    // 3. Hydration: a metadata-only chat opened.
    let chatID = "chat-013"
    let opened = try await session.client.openChat(chatID)
    print("")
    print("Open \(chatID) (metadata only): \(describe(opened)); request_chat_content_batch sent.")
    try await session.until {
        if case .hydrated(let ids) = $0 { return ids.contains(chatID) }
        return false
    }
    print("  chat_content_batch_response arrived: \(describe(try await session.client.openChat(chatID))).")

    // 4. Offline: actions queue durably and apply locally, then replay in order on reconnect, in the reference
    // server's own events; the server refuses one, which is undone.
    print("")
    network.refusing = true
    await server.dropAllConnections()
    try await session.untilStatus { $0.offlineBanner }
    var variant = OpenMatesSandboxVariant()
    variant.refusedActions = ["update_chat"]
    await server.setVariant(variant)
    // A fixed hide secret keeps the demo deterministic (an app derives it from the user's hide password).
    let unlock = OpenMatesHiddenChatUnlock(
        secret: try TidingsCrypto.SymmetricKey(bytes: TidingsCrypto.SHA256.hash(Array("demo hide secret".utf8))))
    print("Offline (offline banner on). Actions, applied locally at once and queued:")
    try await session.client.sendMessage(
        chatID: "chat-000", messageID: "demo-offline-1", encryptedContent: "sealed: see you at 6",
        createdAt: 1_700_000_500, askAI: "see you at 6")
    try await session.client.setHidden(true, chatID: "chat-002", masterKey: server.masterKey, unlock: unlock)
    try await session.client.setPinned(true, chatID: "chat-005")
    for action in try session.store.pendingActions() {
        let event = OpenMatesClientRequest.eventType(of: action.kind) ?? "?"
        print("  queued \(action.kind) on \(action.chatID) (\(event))")
    }
    print("  chat-005 first in the list: \(try session.store.chatList().first?.chatID == "chat-005" ? "yes" : "no")")

    network.refusing = false
    try await session.reconnect()
    print("Back online; the queue drains in order (each settled by the server's answer or failed after 3 tries):")
    var settled = 0
    try await session.until { change in
        switch change {
        case .actionSucceeded(let action):
            print("  \(action.kind) on \(action.chatID): acknowledged")
        case .actionFailed(let action, let error):
            print("  \(action.kind) on \(action.chatID): failed, \(error.detail ?? "no reason"); undone")
        default: return false
        }
        settled += 1
        return settled == 4
    }
    let pinned = try session.store.chat("chat-005")?.chat.pinned ?? true
    print(
        "  queue empty: \(try session.store.pendingActions().isEmpty ? "yes" : "no"); chat-005 pinned: "
            + "\(pinned ? "yes" : "no") (the server's value); server applied: "
            + (await server.appliedActions).joined(separator: ", ") + "; AI asked: "
            + (await server.aiRequests).joined(separator: ", "))
    await session.client.close()

    // 5. Offline prefetch: the older chats' content, chunk by chunk from cursor 10, until the server says done.
    print("")
    print(
        "Offline prefetch (on Wi-Fi, not in Low Power mode): POST /v1/sync/offline-prefetch from cursor 10, chunks of 3:"
    )
    let prefetchClock = TestClock()
    let prefetchEndpoint = OpenMatesSandboxPrefetchEndpoint(server: server, clock: prefetchClock)
    // As the real server may: `done` on an extra empty page after the last chats.
    prefetchEndpoint.variant.doneOnExtraEmptyPage = true
    let prefetcher = OpenMatesPrefetcher(
        configuration: .init(requestTimeout: .seconds(3600)),
        transport: prefetchEndpoint.inProcessTransport(refreshToken: server.token), store: session.store,
        clock: prefetchClock, conditions: .init(isOnline: true))
    let pass = await runOpenMatesPrefetchPass(prefetcher, virtualClock: prefetchClock, timeout: .seconds(30)) {
        cursor, next, plan in
        var parts = ["cursor \(cursor) → \(next.map(String.init) ?? "done")"]
        if !plan.contentStored.isEmpty { parts.append("stored \(plan.contentStored.joined(separator: ", "))") }
        if !plan.alreadyStored.isEmpty { parts.append("already stored \(plan.alreadyStored.joined(separator: ", "))") }
        if plan.contentStored.isEmpty, plan.alreadyStored.isEmpty { parts.append("empty page") }
        print("  " + parts.joined(separator: "; "))
    }
    guard pass.succeeded else {
        throw ToolFailure(ExitCode.software, "the OpenMates demo's prefetch did not finish: \(pass.stateText)")
    }
    let metadataOnly = try session.store.chatList().filter {
        try session.store.chat($0.chatID)?.content.isMetadataOnly ?? true
    }
    print(
        "  \(pass.stateText): \(pass.chunks) chunks, \(pass.chats) chats and \(pass.messages) messages stored, "
            + "2 s apart on the virtual clock; cursor reset; metadata-only chats left: \(metadataOnly.count).")
    session.store.database.close()
}

private func describe(_ content: OpenMatesClient.ChatContent) -> String {
    switch content {
    case .loaded(let messages): return "loaded, \(messages.count) messages"
    case .loading(let partial): return "loading (\(partial.count) messages shown, not final)"
    case .notAvailableOffline: return "not available offline"
    }
}

/// A transport that can be switched off, as a lost network is.
private final class OpenMatesDemoNetwork: OpenMatesTransport, Sendable {
    private let base: any OpenMatesTransport
    private let state = LockedState(false)

    init(_ base: any OpenMatesTransport) { self.base = base }

    var refusing: Bool {
        get { state.withLock { $0 } }
        set { state.withLock { $0 = newValue } }
    }

    func connect() async throws -> OpenMatesChannel {
        if refusing { throw OpenMatesError.connectionLost }
        return try await base.connect()
    }
}

/// One launch of the app: a store file, a client on a virtual clock and its change stream.
private final class OpenMatesDemoSession {
    let store: OpenMatesStore
    let clock = TestClock()
    let client: OpenMatesClient
    private var iterator: ChangeSubscription<OpenMatesClient.Change>.AsyncIterator

    init(path: String, network: OpenMatesDemoNetwork) async throws {
        store = try await OpenMatesStore.open(path: path)
        client = OpenMatesClient(
            configuration: .init(reconnectBackoff: Backoff(base: .seconds(1), cap: .seconds(30), random: { 0.5 })),
            transport: network, store: store, clock: clock)
        iterator = client.changes(bufferingLimit: 10_000).makeAsyncIterator()
    }

    /// Reads changes until `predicate` holds; the stream ends only when the client closes.
    func until(_ predicate: (OpenMatesClient.Change) throws -> Bool) async throws {
        while let change = await iterator.next() {
            if try predicate(change) { return }
        }
        throw ToolFailure(ExitCode.software, "the OpenMates demo's client stopped early")
    }

    func untilStatus(_ predicate: @escaping (OpenMatesSyncStatus) -> Bool) async throws {
        try await until { change in
            if case .status(let status) = change { return predicate(status) }
            return false
        }
    }

    /// Until the sync is complete now (a complete read from the stream may be an earlier one).
    func untilSynced() async throws {
        repeat { try await untilStatus { $0.sync == .complete } } while await client.status.sync != .complete
    }

    /// Lets the reconnect delay pass on the virtual clock, then waits until connected.
    func reconnect() async throws {
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while !(await clock.waitForSleepers(1, maxYields: 1_000)) {
            guard ContinuousClock.now < deadline else { throw ToolFailure(ExitCode.software, "the demo stalled") }
            try await Task.sleep(for: .milliseconds(1))
        }
        await clock.advance(by: .seconds(30))
        try await untilStatus { $0.connectionStatus == .connected }
    }

    func close() async {
        await client.close()
        store.database.close()
    }
}
