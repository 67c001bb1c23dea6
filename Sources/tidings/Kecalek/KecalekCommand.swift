import Foundation
import TidingsCore
import TidingsKecalek
import TidingsNet
import TidingsSandbox

/// `tidings kecalek`: sync a Kecalek server into the encrypted cache, or show the cache offline.
let kecalekCommand = Command(
    name: "kecalek",
    abstract: "Sync the Kecalek messenger into an encrypted local cache, or show the cache offline.",
    usage: "kecalek <subcommand> [options]",
    subcommands: [kecalekSyncCommand, kecalekShowCommand]
)

private let storeOption = "--store <path>          The cache file (default: kecalek-cache.sqlite)."
private let keyOption =
    "--key <hex>             The cache's 256-bit key as 64 hex digits (or TIDINGS_KECALEK_KEY; the sandbox "
    + "has a fixed one)."

let kecalekSyncCommand = Command(
    name: "sync",
    abstract: "Connect, sync conversations incrementally, print what crossed the wire and what changed.",
    usage: "kecalek sync [--server <url>] [--token <token>] [--user <id>] [--store <path>] [--key <hex>] "
        + "[--conversation <id>]... [--conversation-key <id>=<hex>]...",
    options: [
        "--server <url>          A Kecalek WebSocket endpoint (default: a sandbox on a loopback WebSocket).",
        "--token <token>         Bearer token for --server (or TIDINGS_KECALEK_TOKEN); sent as a header.",
        "--user <id>             Who is syncing (default: alice); mark_read skips their own messages.",
        storeOption, keyOption,
        "--conversation <id>     A conversation to sync; repeatable (default: every sandbox conversation).",
        "--conversation-key <id>=<hex>  A conversation's AES-256-GCM key for --server; repeatable.",
        "--limit <n>             Messages per conversation page (default: 50).",
    ],
    run: { arguments in
        let server = try arguments.option("--server")
        let token = try arguments.option("--token") ?? ProcessInfo.processInfo.environment["TIDINGS_KECALEK_TOKEN"]
        let user = try arguments.option("--user") ?? "alice"
        let store = try arguments.option("--store") ?? "kecalek-cache.sqlite"
        let keyText = try arguments.option("--key")
        let limit = try arguments.intOption("--limit", in: 1...1000) ?? 50
        var conversations: [String] = []
        while let conversation = try arguments.option("--conversation") { conversations.append(conversation) }
        var conversationKeys: [String: SymmetricKey] = [:]
        while let pair = try arguments.option("--conversation-key") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, let key = symmetricKey(hex: parts[1]) else {
                throw UsageError(message: "Expected --conversation-key <id>=<64 hex digits>.")
            }
            conversationKeys[parts[0]] = key
        }
        try arguments.finish()
        try await runKecalekSync(
            server: server, token: token, user: user, store: store, keyText: keyText, limit: limit,
            conversations: conversations, conversationKeys: conversationKeys)
    }
)

let kecalekShowCommand = Command(
    name: "show",
    abstract: "Print the cached conversations and their newest messages, offline.",
    usage: "kecalek show [--store <path>] [--key <hex>] [--conversation <id>]... [--limit <n>]",
    options: [
        storeOption, keyOption,
        "--conversation <id>     Show only this conversation; repeatable.",
        "--limit <n>             Newest messages per conversation (default: 10).",
    ],
    run: { arguments in
        let store = try arguments.option("--store") ?? "kecalek-cache.sqlite"
        let keyText = try arguments.option("--key")
        let limit = try arguments.intOption("--limit", in: 0...10_000) ?? 10
        var only: [String] = []
        while let conversation = try arguments.option("--conversation") { only.append(conversation) }
        try arguments.finish()
        guard FileManager.default.fileExists(atPath: store) else {
            throw KecalekCLIError(message: "No cache at \(store); run 'tidings kecalek sync' first.")
        }
        let cache = try KecalekSQLiteCache(path: store, key: try cacheKey(keyText, sandbox: true))
        let summaries = try cache.conversations().filter { only.isEmpty || only.contains($0.conversationID) }
        print("Cache \(store) (encrypted at rest), \(summaries.count) conversation(s), read offline:")
        for summary in summaries {
            print("")
            print("\(summary.conversationID): \(summary.messageCount) cached, newest \(summary.newest?.text ?? "-")")
            for message in try cache.newestMessages(conversationID: summary.conversationID, limit: limit) {
                print("  " + describe(message))
            }
        }
    }
)

/// A failure the tool reports with exit code 1.
struct KecalekCLIError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

private func runKecalekSync(
    server: String?, token: String?, user: String, store: String, keyText: String?, limit: Int,
    conversations requested: [String], conversationKeys: [String: SymmetricKey]
) async throws {
    // Every usage check comes before the cache file is created.
    var serverURL: URL?
    if let server {
        guard let url = URL(string: server), ["ws", "wss"].contains(url.scheme ?? "") else {
            throw UsageError(message: "--server must be a ws:// or wss:// URL.")
        }
        guard !requested.isEmpty else {
            throw UsageError(message: "--server needs at least one --conversation.")
        }
        serverURL = url
    }
    let cache = try KecalekSQLiteCache(path: store, key: try cacheKey(keyText, sandbox: server == nil))
    let before = try cache.conversations()
    let transport: any KecalekTransport
    let decryptor: any KecalekMessageDecryptor
    var conversations = requested
    var endpoint: KecalekSandboxWebSocketServer?
    if let url = serverURL {
        transport = KecalekWebSocketTransport(url: url, token: token)
        decryptor = KecalekAESGCMCipher(keys: conversationKeys)
        print("Kecalek sync with \(url.host ?? "server") as \(user)")
    } else {
        let sandbox = try await KecalekSandboxServer.sample(clock: ContinuousClock())
        let loopback = try KecalekSandboxWebSocketServer(server: sandbox)
        endpoint = loopback
        transport = KecalekWebSocketTransport(url: loopback.url, token: sandbox.token(for: user))
        decryptor = sandbox.cipher
        if conversations.isEmpty { conversations = await sandbox.conversationIDs }
        print("Kecalek sync with the sandbox at \(loopback.url) as \(user)")
    }
    defer { endpoint?.stop() }
    print("Cache: \(store) (encrypted at rest)\n")
    let client = KecalekClient(
        configuration: .init(userID: user, reconnects: false), transport: transport, cache: cache,
        decryptor: decryptor, clock: ContinuousClock())
    do {
        try await client.connect()
    } catch {
        print("Could not connect (\(error)); answering from the cache.\n")
    }
    for conversation in conversations {
        let page = await client.messages(conversation: conversation, limit: limit)
        print(
            "\(conversation): \(describe(page.source)) — \(page.messages.count) shown, \(page.newMessageIDs.count) new, "
                + "\(page.deletedMessageIDs.count) deleted, \(page.markedRead.count) marked read")
        for request in page.traffic.requests { print("  \(request)") }
        for issue in page.issues { print("  skipped: \(issue)") }
        print("  wire: ↑\(page.traffic.bytesSent) B ↓\(page.traffic.bytesReceived) B")
    }
    let sent = await client.totalBytesSent
    let received = await client.totalBytesReceived
    await client.close()
    print("\nWire total: ↑\(sent) B ↓\(received) B (JSON text, without WebSocket framing)")
    print("Store:")
    let after = try cache.conversations()
    for summary in after {
        let old = before.first { $0.conversationID == summary.conversationID }?.messageCount ?? 0
        let delta = summary.messageCount - old
        print(
            "  \(summary.conversationID): \(summary.messageCount) messages (\(delta >= 0 ? "+" : "")\(delta)), newest \(summary.newest?.text ?? "-")"
        )
    }
}

func describe(_ source: KecalekMessagePage.Source) -> String {
    switch source {
    case .incremental: "incremental (after_ts)"
    case .full: "full fetch"
    case .cache(let error): "from the cache (\(error))"
    case .unavailable(let error): "unavailable (\(error))"
    }
}

func describe(_ message: KecalekMessage) -> String {
    var line = "\(message.createdAt.text)  \(message.senderID): \(message.text ?? "(no text)")"
    if message.pinned { line += "  📌" }
    if !message.reactions.isEmpty { line += "  " + message.reactions.map(\.emoji).joined() }
    return line
}

/// The cache key from `--key`, the environment, or (sandbox only) the sandbox's fixed key.
private func cacheKey(_ text: String?, sandbox: Bool) throws -> SymmetricKey {
    if let text = text ?? ProcessInfo.processInfo.environment["TIDINGS_KECALEK_KEY"] {
        guard let key = symmetricKey(hex: text) else { throw UsageError(message: "--key needs 64 hex digits.") }
        return key
    }
    guard sandbox else { throw UsageError(message: "--server needs --key (or TIDINGS_KECALEK_KEY) for the cache.") }
    return try SymmetricKey(bytes: SHA256.hash(Array("tidings kecalek sandbox cache".utf8)))
}

private func symmetricKey(hex: String) -> SymmetricKey? {
    let digits = Array(hex.utf8)
    guard digits.count == 64 else { return nil }
    var bytes: [UInt8] = []
    for index in stride(from: 0, to: 64, by: 2) {
        guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else {
            return nil
        }
        bytes.append(byte)
    }
    return try? SymmetricKey(bytes: bytes)
}
