import Foundation
import TidingsCore
import TidingsKecalek
import TidingsNet
import TidingsSandbox

/// What `tidings kecalek sync` was asked to do.
struct KecalekSyncOptions: Sendable {
    var server: String?
    var token: String?
    var user: String?
    var store: String
    var keyText: String?
    var limit: Int
    var conversations: [String]
    var conversationKeys: [String: TidingsCrypto.SymmetricKey]
    /// One JSON object per line instead of text (`--json`).
    var json = false

    /// The server URL (nil for the sandbox) and the cache key, after every check the command line can fail.
    ///
    /// - Throws: ``ValidationError`` for a bad or incomplete `--server` setup or a bad key; called by the
    ///   command's validate step, so it fails before any file is opened or created.
    func plan() throws -> (serverURL: URL?, key: KecalekCacheKey) {
        var serverURL: URL?
        if let server {
            guard let url = URL(string: server), ["ws", "wss"].contains(url.scheme ?? "") else {
                throw ValidationError("--server must be a ws:// or wss:// URL.")
            }
            guard user != nil else {
                throw ValidationError(
                    "--server needs --user <id>: it decides which messages are your own (mark_read skips them).")
            }
            guard !conversations.isEmpty else { throw ValidationError("--server needs at least one --conversation.") }
            if let missing = conversations.first(where: { conversationKeys[$0] == nil }) {
                throw ValidationError(
                    "No --conversation-key for '\(missing)': pass --conversation-key \(missing)=<64 hex digits>; "
                        + "without it none of its messages can be decrypted or cached.")
            }
            serverURL = url
        }
        return (serverURL, try KecalekCacheKey.resolve(keyText, sandboxAllowed: server == nil))
    }
}

/// `tidings kecalek sync`: syncs every requested conversation and exits non-zero, with one `Error:` line per
/// failure, when any of them did not sync (see the command's help for the codes).
func runKecalekSync(_ options: KecalekSyncOptions) async throws {
    // Every usage check comes before the cache file is opened or created.
    let (serverURL, key) = try options.plan()
    let report = KecalekSyncReport(json: options.json)
    let user = options.user ?? "alice"
    let store = options.store
    try await refuseForeignFile(store)
    let cache: KecalekSQLiteCache
    do {
        cache = try await KecalekSQLiteCache.open(path: store, key: key.key)
    } catch {
        throw cacheFailure(error, store: store)
    }
    for line in recoveryLines(cache.database.openReport, store: store) { report.recovery(line) }
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
        report.start("Kecalek sync with \(target) as \(user)", target: target, user: user)
    } else {
        let sandbox = try await KecalekSandboxServer.sample(clock: ContinuousClock())
        let loopback = try KecalekSandboxWebSocketServer(server: sandbox)
        endpoint = loopback
        transport = KecalekWebSocketTransport(url: loopback.url, token: sandbox.token(for: user))
        decryptor = sandbox.cipher
        if conversations.isEmpty { conversations = await sandbox.conversationIDs }
        target = "the sandbox"
        report.start("Kecalek sync with the sandbox at \(loopback.url) as \(user)", target: "sandbox", user: user)
    }
    defer { endpoint?.stop() }
    report.cache(store: store, key: key)
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
    var failures: [ToolFailure.Problem] = []
    for conversation in conversations {
        let page = await client.messages(conversation: conversation, limit: options.limit)
        let failure = pageFailure(page)
        report.page(page, synced: failure == nil)
        if let failure { failures.append(failure) }
    }
    let sent = await client.totalBytesSent
    let received = await client.totalBytesReceived
    await client.close()
    report.total(sent: sent, received: received)
    // Closing checkpoints the WAL into the file and removes the `-wal`, so the file alone is the cache.
    let after = try await offPool {
        defer { cache.database.close() }
        return try cache.conversations()
    }
    for summary in after {
        let old = before.first { $0.conversationID == summary.conversationID }?.messageCount ?? 0
        report.store(summary, added: summary.messageCount - old)
    }
    if !failures.isEmpty { throw ToolFailure(problems: failures) }
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
private func pageFailure(_ page: KecalekMessagePage) -> ToolFailure.Problem? {
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
        return .init(code: code, message: "\(conversation): not synced — \(error).", conversation: conversation)
    case .incremental, .full:
        let undecryptable = page.issues.filter {
            $0.error == KecalekError.decryption || $0.error == KecalekError.missingKey
        }
        guard !undecryptable.isEmpty, page.newMessageIDs.isEmpty else { return nil }
        return .init(
            code: ExitCode.dataError,
            message: "\(conversation): none of the \(undecryptable.count) fetched messages decrypted with its "
                + "--conversation-key; nothing was cached.",
            conversation: conversation)
    }
}
