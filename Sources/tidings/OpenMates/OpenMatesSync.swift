import Foundation
import TidingsCore
import TidingsOpenMates
import TidingsSandbox

/// Row counts of a store, for the before/after lines of `sync`.
struct OpenMatesStoreSummary: Sendable {
    var chats = 0
    var metadataOnly = 0
    var messages = 0
    var embeds = 0
    var embedKeys = 0
    var suggestions = 0

    init() {}

    init(_ store: OpenMatesStore) throws {
        chats = try store.count(.chats)
        messages = try store.count(.messages)
        embeds = try store.count(.embeds)
        embedKeys = try store.count(.embedKeys)
        suggestions = try store.count(.suggestions)
        metadataOnly = try store.localView().chats.keys.filter { try store.chat($0)?.content.isMetadataOnly ?? true }
            .count
    }

    var json: [String: Any] {
        [
            "chats": chats, "metadataOnly": metadataOnly, "messages": messages, "embeds": embeds,
            "embedKeys": embedKeys, "suggestions": suggestions,
        ]
    }

    var text: String {
        "\(chats) chats (\(metadataOnly) metadata-only), \(messages) messages, \(embeds) embeds, "
            + "\(embedKeys) embed keys, \(suggestions) suggestions"
    }
}

/// How waiting for the sync ended.
private enum SyncOutcome: Sendable {
    case complete(OpenMatesSyncStatus)
    case failed(OpenMatesSyncStatus)
    case timedOut
}

/// `tidings openmates sync`: one phased sync into the store; exit 0 only when it completed.
func runOpenMatesSync(_ options: OpenMatesSyncOptions) async throws {
    let store: OpenMatesStore
    do {
        store = try await OpenMatesStore.open(path: options.store)
    } catch {
        throw ToolFailure(ExitCode.ioError, "Cannot open the store \(options.store): \(error)")
    }
    defer { store.database.close() }
    let before: OpenMatesStoreSummary
    do {
        if options.reset { try await offPool { try store.resetLocalStore() } }
        before = try await offPool { try OpenMatesStoreSummary(store) }
    } catch {
        throw ToolFailure(ExitCode.ioError, "Cannot read the store \(options.store): \(error)")
    }

    let transport: any OpenMatesTransport
    let target: String
    var endpoint: OpenMatesSandboxWebSocketServer?
    var sandboxServer: OpenMatesSandboxServer?
    if let server = options.server {
        let credential: OpenMatesWebSocketTransport.Credential? =
            options.token.map { .token($0) } ?? options.cookie.map { .cookie($0) }
        transport = try OpenMatesWebSocketTransport(origin: server, sessionID: options.session, credential: credential)
        target = server.host ?? "server"
    } else {
        let sandbox = OpenMatesSandboxServer()
        await sandbox.seed(parents: 24, messagesEach: 6, subChatsOfNewest: 2)
        sandboxServer = sandbox
        let sandboxEndpoint = try OpenMatesSandboxWebSocketServer(server: sandbox)
        endpoint = sandboxEndpoint
        transport = sandboxEndpoint.inProcessTransport(token: sandbox.token)
        target = "sandbox (in process)"
    }
    defer { endpoint?.stop() }
    if options.json {
        JSONLines.emit(["type": "start", "target": target, "store": options.store])
    } else {
        print("OpenMates sync: \(target) into \(options.store)")
    }

    let client = OpenMatesClient(
        configuration: .init(reconnects: false), transport: transport, store: store, clock: ContinuousClock())
    let changes = client.changes()
    await client.start()
    let timeout = options.timeout
    let outcome = await withTaskGroup(of: SyncOutcome.self) { group in
        group.addTask {
            for await change in changes {
                guard case .status(let status) = change else { continue }
                if status.sync == .complete { return .complete(status) }
                if status.connectionStatus == .failed { return .failed(status) }
            }
            return .timedOut
        }
        group.addTask {
            try? await Task.sleep(for: .seconds(timeout))
            return .timedOut
        }
        let first = await group.next() ?? .timedOut
        group.cancelAll()
        return first
    }
    let status = await client.status
    let traffic = await client.traffic
    await client.close()
    var prefetched: OpenMatesPrefetchSummary?
    if options.prefetch, case .complete = outcome {
        prefetched = try await runSyncPrefetch(options, store: store, sandbox: sandboxServer)
    }
    let after = try await offPool { try OpenMatesStoreSummary(store) }

    for (direction, counts) in [("sent", traffic.sent), ("received", traffic.received)] {
        if options.json {
            JSONLines.emit(["type": "traffic", "direction": direction, "counts": counts])
        } else {
            let list = counts.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }
            print("\(direction): \(list.isEmpty ? "nothing" : list.joined(separator: ", "))")
        }
    }
    if let prefetched {
        if options.json {
            var line = prefetched.json
            line["type"] = "prefetch"
            JSONLines.emit(line)
        } else {
            print(
                "prefetch: \(prefetched.chunks) chunks (\(prefetched.cursorText)), \(prefetched.chats) chats, "
                    + "\(prefetched.messages) messages stored; \(prefetched.stateText)")
        }
    }
    if options.json {
        var line = after.json
        line["type"] = "store"
        line["before"] = before.json
        JSONLines.emit(line)
        JSONLines.emit([
            "type": "status", "sync": status.sync == .complete ? "complete" : "pending",
            "connection": "\(status.connectionStatus)", "serverChatCount": status.serverChatCount as Any? ?? NSNull(),
        ])
    } else {
        print("store: \(after.text) (before: \(before.text))")
        print("sync: \(status.sync == .complete ? "complete" : "pending")")
    }
    switch outcome {
    case .complete:
        if let prefetched, !prefetched.succeeded {
            throw ToolFailure(ExitCode.temporaryFailure, "Prefetch did not finish: \(prefetched.stateText).")
        }
        return
    case .failed:
        throw ToolFailure(ExitCode.unavailable, "The server could not be reached or refused the login.")
    case .timedOut:
        let reported = status.serverChatCount.map { "the server reported \($0) chats, " } ?? ""
        throw ToolFailure(
            ExitCode.temporaryFailure,
            "Sync still pending after \(timeout) s: \(reported)\(after.chats) stored; nothing marks it complete by time."
        )
    }
}

/// One prefetch pass after the sync: over HTTP to the server's origin (http/https for ws/wss) with the refresh
/// token, or to the sandbox in process on a virtual clock (its 2 s spacing would otherwise be real seconds).
private func runSyncPrefetch(_ options: OpenMatesSyncOptions, store: OpenMatesStore, sandbox: OpenMatesSandboxServer?)
    async throws -> OpenMatesPrefetchSummary
{
    let conditions = OpenMatesPrefetchConditions(isOnline: true)
    if let sandbox {
        let clock = TestClock()
        let endpoint = OpenMatesSandboxPrefetchEndpoint(server: sandbox, clock: clock)
        let prefetcher = OpenMatesPrefetcher(
            configuration: .init(requestTimeout: .seconds(3600)),
            transport: endpoint.inProcessTransport(refreshToken: sandbox.token), store: store, clock: clock,
            conditions: conditions)
        return await runOpenMatesPrefetchPass(prefetcher, virtualClock: clock, timeout: .seconds(options.timeout))
    }
    guard let server = options.server, let refreshToken = options.refreshToken,
        var components = URLComponents(url: server, resolvingAgainstBaseURL: false)
    else { throw ToolFailure(ExitCode.software, "prefetch without a server or refresh token") }
    components.scheme = components.scheme == "wss" ? "https" : "http"
    components.path = ""
    components.query = nil
    guard let origin = components.url else { throw ToolFailure(ExitCode.usage, "--server has no usable origin.") }
    let transport: OpenMatesPrefetchHTTPTransport
    do { transport = try OpenMatesPrefetchHTTPTransport(origin: origin, refreshToken: refreshToken) } catch {
        throw ToolFailure(ExitCode.usage, "Cannot prefetch from \(origin.host ?? "the server"): \(error)")
    }
    let prefetcher = OpenMatesPrefetcher(
        transport: transport, store: store, clock: ContinuousClock(), conditions: conditions)
    return await runOpenMatesPrefetchPass(prefetcher, virtualClock: nil, timeout: .seconds(options.timeout))
}
