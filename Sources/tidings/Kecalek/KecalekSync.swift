import Foundation
import TidingsCore
import TidingsKecalek
import TidingsNet
import TidingsSandbox

/// What `tidings kecalek sync` was asked to do.
struct KecalekSyncOptions {
    var server: String?
    var token: String?
    var user: String?
    var store: String
    var keyText: String?
    var limit: Int
    var conversations: [String]
    var conversationKeys: [String: TidingsCrypto.SymmetricKey]
}

/// `tidings kecalek sync`: syncs every requested conversation and exits non-zero, with one `Error:` line per
/// failure, when any of them did not sync (see the command's help for the codes).
func runKecalekSync(_ options: KecalekSyncOptions) async throws {
    // Every usage check comes before the cache file is opened or created.
    var serverURL: URL?
    if let server = options.server {
        guard let url = URL(string: server), ["ws", "wss"].contains(url.scheme ?? "") else {
            throw UsageError(message: "--server must be a ws:// or wss:// URL.")
        }
        guard options.user != nil else {
            throw UsageError(
                message: "--server needs --user <id>: it decides which messages are your own (mark_read skips them).")
        }
        guard !options.conversations.isEmpty else {
            throw UsageError(message: "--server needs at least one --conversation.")
        }
        if let missing = options.conversations.first(where: { options.conversationKeys[$0] == nil }) {
            throw UsageError(
                message: "No --conversation-key for '\(missing)': pass --conversation-key \(missing)=<64 hex digits>; "
                    + "without it none of its messages can be decrypted or cached.")
        }
        serverURL = url
    }
    let key = try KecalekCacheKey.resolve(options.keyText, sandboxAllowed: options.server == nil)
    let user = options.user ?? "alice"
    let store = options.store
    try await refuseForeignFile(store)
    let cache: KecalekSQLiteCache
    do {
        cache = try await KecalekSQLiteCache.open(path: store, key: key.key)
    } catch {
        throw cacheFailure(error, store: store)
    }
    for line in recoveryLines(cache.database.openReport, store: store) { print(line) }
    let before = try await offPool { try cache.conversations() }
    let transport: any KecalekTransport
    let decryptor: any KecalekMessageDecryptor
    var conversations = options.conversations
    var endpoint: KecalekSandboxWebSocketServer?
    let target: String
    if let url = serverURL {
        transport = KecalekWebSocketTransport(url: url, token: options.token)
        decryptor = KecalekAESGCMCipher(keys: options.conversationKeys)
        target = "\(url.host ?? "server")" + (url.port.map { ":\($0)" } ?? "")
        print("Kecalek sync with \(target) as \(user)")
    } else {
        let sandbox = try await KecalekSandboxServer.sample(clock: ContinuousClock())
        let loopback = try KecalekSandboxWebSocketServer(server: sandbox)
        endpoint = loopback
        transport = KecalekWebSocketTransport(url: loopback.url, token: sandbox.token(for: user))
        decryptor = sandbox.cipher
        if conversations.isEmpty { conversations = await sandbox.conversationIDs }
        target = "the sandbox"
        print("Kecalek sync with the sandbox at \(loopback.url) as \(user)")
    }
    defer { endpoint?.stop() }
    print("Cache: \(store) (\(key.disclosure))\n")
    let client = KecalekClient(
        configuration: .init(userID: user, reconnects: false), transport: transport, cache: cache,
        decryptor: decryptor, clock: ContinuousClock())
    do {
        try await client.connect()
    } catch {
        await client.close()
        try? await offPool { cache.database.close() }
        throw connectFailure(error, target: target, conversations: conversations)
    }
    var failures: [(code: Int32, line: String)] = []
    for conversation in conversations {
        let page = await client.messages(conversation: conversation, limit: options.limit)
        print(
            "\(conversation): \(describe(page.source)) — \(page.messages.count) shown, \(page.newMessageIDs.count) new, "
                + "\(page.deletedMessageIDs.count) deleted, \(page.markedRead.count) marked read")
        for request in page.traffic.requests { print("  \(request)") }
        for issue in page.issues { print("  skipped: \(issue)") }
        print("  wire: ↑\(page.traffic.bytesSent) B ↓\(page.traffic.bytesReceived) B")
        if let failure = pageFailure(page) { failures.append(failure) }
    }
    let sent = await client.totalBytesSent
    let received = await client.totalBytesReceived
    await client.close()
    print("\nWire total: ↑\(sent) B ↓\(received) B (JSON text, without WebSocket framing)")
    print("Store:")
    // Closing checkpoints the WAL into the file and removes the `-wal`, so the file alone is the cache.
    let after = try await offPool {
        defer { cache.database.close() }
        return try cache.conversations()
    }
    for summary in after {
        let old = before.first { $0.conversationID == summary.conversationID }?.messageCount ?? 0
        let delta = summary.messageCount - old
        print(
            "  \(summary.conversationID): \(summary.messageCount) messages (\(delta >= 0 ? "+" : "")\(delta)), newest \(summary.newest?.text ?? "-")"
        )
    }
    if let first = failures.first {
        throw ToolFailure(first.code, failures.map(\.line))
    }
}

/// Refuses, before anything writes to it, a database file that holds another program's tables: opening it
/// read-write would add the cache's tables to it. Damaged files and old caches pass: opening recovers or
/// migrates them and says so.
private func refuseForeignFile(_ store: String) async throws {
    guard FileManager.default.fileExists(atPath: store) else { return }
    do {
        let probe = try await SQLiteDatabase.open(
            path: store, schema: KecalekSQLiteCache.schema,
            configuration: .init(checksIntegrityOnOpen: false, readOnly: true))
        probe.close()
    } catch let error as StoreError where error == .misuse {
        throw cacheFailure(error, store: store)
    } catch {
        // Damage, an old or too-new layout, a wrong key: the read-write open deals with them.
    }
}

/// Why the connection could not be opened: a refused token (HTTP 401/403) is 77, anything else 69.
private func connectFailure(_ error: any Error, target: String, conversations: [String]) -> ToolFailure {
    let nothing = "nothing synced (\(conversations.joined(separator: ", ")))"
    if let error = error as? WebSocketError, let status = error.httpStatus, status == 401 || status == 403 {
        return ToolFailure(
            ExitCode.noPermission, "\(target) refused the token (HTTP \(status)); \(nothing).")
    }
    return ToolFailure(ExitCode.unavailable, "cannot reach \(target) (\(error)); \(nothing).")
}

/// Why a conversation did not sync, with its exit code; nil when it did.
///
/// A page answered from the cache or left unavailable did not sync; neither did one whose every fetched
/// message failed to decrypt (a wrong `--conversation-key`), since nothing of it could be cached.
private func pageFailure(_ page: KecalekMessagePage) -> (code: Int32, line: String)? {
    let conversation = page.conversationID
    switch page.source {
    case .cache(let error), .unavailable(let error):
        let code: Int32 =
            if error == KecalekError.server || error == KecalekError.malformedFrame {
                ExitCode.protocolError
            } else if error == KecalekError.timeout {
                ExitCode.temporaryFailure
            } else if error == KecalekError.cache {
                ExitCode.ioError
            } else if error == KecalekError.notConnected || error == KecalekError.connectionLost {
                ExitCode.unavailable
            } else {
                ExitCode.software
            }
        return (code, "\(conversation): not synced — \(error).")
    case .incremental, .full:
        let undecryptable = page.issues.filter {
            $0.error == KecalekError.decryption || $0.error == KecalekError.missingKey
        }
        guard !undecryptable.isEmpty, page.newMessageIDs.isEmpty else { return nil }
        return (
            ExitCode.dataError,
            "\(conversation): none of the \(undecryptable.count) fetched messages decrypted with its "
                + "--conversation-key; nothing was cached."
        )
    }
}
