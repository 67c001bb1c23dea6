import Foundation
import TidingsCore
import TidingsKecalek
import TidingsNet
import TidingsSandbox

/// The document's table "Co se změní v praxi", row by row, against the sandbox over a loopback
/// WebSocket, with the bytes that crossed the wire each time.
let kecalekDemoPart = DemoPart(name: "kecalek", title: "Kecalek: incremental sync with an encrypted cache") {
    let sandbox = try await KecalekSandboxServer.sample(clock: ContinuousClock())
    let endpoint = try KecalekSandboxWebSocketServer(server: sandbox)
    defer { endpoint.stop() }
    let cache = try KecalekSQLiteCache(path: ":memory:", key: TidingsCrypto.SymmetricKey.random())
    let client = KecalekClient(
        configuration: .init(userID: "alice", reconnectBackoff: Backoff(base: .milliseconds(100), cap: .seconds(30))),
        transport: KecalekWebSocketTransport(
            url: endpoint.url, token: sandbox.token(for: "alice"), configuration: .init(pingInterval: nil)),
        cache: cache, decryptor: sandbox.cipher, clock: ContinuousClock())
    try await client.connect()
    print("alice opens #general (120 messages on the server) over \(endpoint.url)")
    print("Bytes are the JSON text of requests and responses (↑ sent, ↓ received).\n")

    func row(_ situation: String, _ page: KecalekMessagePage, before: String) {
        print("• \(situation)")
        print("    before: \(before)")
        print("    now:    \(describe(page.source)); \(page.messages.count) shown, \(page.newMessageIDs.count) new")
        for request in page.traffic.requests { print("            \(request)") }
        print("    wire:   \(page.traffic.totalBytes) B in total\n")
    }

    let first = await client.messages(conversation: "general")
    row("First open of the conversation", first, before: "server returns 50 messages")

    // The app is closed; five minutes pass and two messages arrive; it relaunches over the same cache.
    await client.close()
    await sandbox.advanceTime(by: .seconds(300))
    try await sandbox.post(conversation: "general", from: "bob", text: "Jste tu ještě?")
    try await sandbox.post(conversation: "general", from: "carol", text: "Jo, za chvíli.")
    let network = OutageSwitch(
        KecalekWebSocketTransport(
            url: endpoint.url, token: sandbox.token(for: "alice"), configuration: .init(pingInterval: nil)))
    let relaunched = KecalekClient(
        configuration: .init(userID: "alice", reconnectBackoff: Backoff(base: .milliseconds(100), cap: .seconds(30))),
        transport: network, cache: cache, decryptor: sandbox.cipher, clock: ContinuousClock())
    try await relaunched.connect()
    let reopened = await relaunched.messages(conversation: "general")
    row("Reopen after 5 minutes (2 new messages)", reopened, before: "server returns 50 messages (all)")
    let ratio = Double(reopened.traffic.totalBytes) / Double(max(1, first.traffic.totalBytes))
    print(String(format: "    → %.1f %% of the first open's bytes\n", ratio * 100))

    let older = await relaunched.messages(conversation: "general", offset: 50)
    row("Load older (scroll up, offset 50)", older, before: "server returns 50 older")

    let sentBefore = await relaunched.totalBytesSent
    let receivedBefore = await relaunched.totalBytesReceived
    let changes = relaunched.changes
    let refreshed = Task {
        for await change in changes {
            if case .refreshed(_, let new, _) = change { return new.count }
        }
        return 0
    }
    // The outage lasts until all three are posted, however slowly this machine runs: a reconnect in
    // between would bring some of them as notifications instead of through the refresh.
    network.isDown = true
    await sandbox.dropAllConnections()
    for text in ["Výpadek?", "Už je to zpátky.", "👍"] {
        try await sandbox.post(conversation: "general", from: "bob", text: text)
    }
    network.isDown = false
    let missed = await refreshed.value
    let sent = await relaunched.totalBytesSent - sentBefore
    let received = await relaunched.totalBytesReceived - receivedBefore
    print("• After a reconnect (3 messages posted during the outage)")
    print("    before: server returns 50 messages")
    print("    now:    the client reconnected and refreshed #general incrementally; \(missed) new")
    print("    wire:   \(sent + received) B in total (↑\(sent) B ↓\(received) B)\n")

    await sandbox.dropAllConnections()
    await relaunched.close()
    let offline = KecalekClient(
        configuration: .init(userID: "alice", reconnects: false),
        transport: NoNetworkTransport(),
        cache: cache, decryptor: sandbox.cipher, clock: ContinuousClock())
    let cached = await offline.messages(conversation: "general")
    row("Offline", cached, before: "nothing (an error)")
    if let last = cached.messages.last { print("    newest cached: \(describe(last))") }
    await offline.close()
    try await secondResolutionRows()
}

/// The first open and the reopen again, against a server that writes `created_at` in whole seconds (so
/// `after_ts` has one-second resolution), over the same loopback WebSocket.
private func secondResolutionRows() async throws {
    let sandbox = KecalekSandboxServer(clock: ContinuousClock())
    await sandbox.setTimestampStyle(.seconds)
    await sandbox.createConversation(
        "general", members: KecalekSandboxServer.sampleUsers, key: try KecalekSandboxServer.sampleKey(for: "general"))
    // Ten seconds apart, as a conversation usually goes. A burst within one second is the worst case: the
    // reopen asks again for its sync point's whole second, so that burst comes back (`tidings-bench kecalek`,
    // K1.seconds.burst).
    let senders = Array(KecalekSandboxServer.sampleUsers.reversed())
    for index in 0..<120 {
        await sandbox.advanceTime(by: .seconds(10))
        try await sandbox.post(
            conversation: "general", from: senders[index % senders.count],
            text: KecalekSandboxServer.sampleText(index, length: 120))
    }
    let endpoint = try KecalekSandboxWebSocketServer(server: sandbox)
    defer { endpoint.stop() }
    let cache = try await KecalekSQLiteCache.open(path: ":memory:", key: TidingsCrypto.SymmetricKey.random())
    func client() -> KecalekClient {
        KecalekClient(
            configuration: .init(userID: "alice", reconnects: false),
            transport: KecalekWebSocketTransport(
                url: endpoint.url, token: sandbox.token(for: "alice"), configuration: .init(pingInterval: nil)),
            cache: cache, decryptor: sandbox.cipher, clock: ContinuousClock())
    }
    print(
        "\nThe same against a server whose created_at has one-second resolution (e.g. \(await sandbox.now.text)),"
            + " messages 10 s apart:\n")
    let opening = client()
    try await opening.connect()
    let first = await opening.messages(conversation: "general")
    await opening.close()
    print("• One-second-resolution server: first open")
    print("    now:    \(describe(first.source)); \(first.messages.count) shown, \(first.newMessageIDs.count) new")
    for request in first.traffic.requests { print("            \(request)") }
    print("    wire:   \(first.traffic.totalBytes) B in total\n")
    await sandbox.advanceTime(by: .seconds(300))
    try await sandbox.post(conversation: "general", from: "bob", text: "Jste tu ještě?")
    try await sandbox.post(conversation: "general", from: "carol", text: "Jo, za chvíli.")
    let reopening = client()
    try await reopening.connect()
    let reopened = await reopening.messages(conversation: "general")
    await reopening.close()
    print("• One-second-resolution server: reopen after 5 minutes (2 new messages)")
    print(
        "    now:    \(describe(reopened.source)); \(reopened.messages.count) shown, \(reopened.newMessageIDs.count) new"
    )
    for request in reopened.traffic.requests { print("            \(request)") }
    print("    wire:   \(reopened.traffic.totalBytes) B in total")
    let ratio = Double(reopened.traffic.totalBytes) / Double(max(1, first.traffic.totalBytes))
    print(String(format: "    → %.1f %% of the first open's bytes", ratio * 100))
}

/// A transport whose network can be switched off: while it is down, connecting fails at once.
private final class OutageSwitch: KecalekTransport, Sendable {
    private let base: any KecalekTransport
    private struct State {
        var down = false
    }
    private let state = LockedState(State())

    init(_ base: any KecalekTransport) { self.base = base }

    var isDown: Bool {
        get { state.withLock { locked in locked.down } }
        set { state.withLock { locked in locked.down = newValue } }
    }

    func connect() async throws -> KecalekChannel {
        if isDown { throw KecalekError.notConnected }
        return try await base.connect()
    }
}

/// A transport for the offline row: there is no network.
private struct NoNetworkTransport: KecalekTransport {
    func connect() async throws -> KecalekChannel { throw KecalekError.notConnected }
}
