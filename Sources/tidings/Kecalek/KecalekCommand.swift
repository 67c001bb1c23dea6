import Foundation
import TidingsCore
import TidingsKecalek

/// `tidings kecalek`: sync a Kecalek server into the encrypted cache, or show the cache offline.
let kecalekCommand = Command(
    name: "kecalek",
    abstract: "Sync the Kecalek messenger into an encrypted local cache, or show the cache offline.",
    usage: "kecalek <subcommand> [options]",
    subcommands: [kecalekSyncCommand, kecalekShowCommand]
)

private let storeOption = "--store <path>          The cache file (default: kecalek-cache.sqlite)."
private let keyOption =
    "--key <hex>             The cache's 256-bit key as 64 hex digits (or TIDINGS_KECALEK_KEY; without it the "
    + "sandbox's public demo key, which anyone can use)."

let kecalekSyncCommand = Command(
    name: "sync",
    abstract: "Connect, sync conversations incrementally, print what crossed the wire and what changed.",
    usage: "kecalek sync [--server <url> --user <id> --key <hex>] [--token <token>] [--store <path>] "
        + "[--conversation <id> --conversation-key <id>=<hex>]...",
    options: [
        "--server <url>          A Kecalek WebSocket endpoint (default: a sandbox on a loopback WebSocket).",
        "--token <token>         Bearer token for --server (or TIDINGS_KECALEK_TOKEN); sent as a header.",
        "--user <id>             Who is syncing; required with --server (mark_read skips their own messages). "
            + "The sandbox's default is alice.",
        storeOption, keyOption,
        "--conversation <id>     A conversation to sync; repeatable (default: every sandbox conversation).",
        "--conversation-key <id>=<hex>  A conversation's AES-256-GCM key; one per --conversation with --server.",
        "--limit <n>             Messages per conversation page (default: 50).",
    ],
    discussion: [
        "EXIT STATUS: 0 when every conversation synced; 64 usage; 65 a damaged cache or undecryptable",
        "  conversation; 69 server unreachable; 74 the cache could not be written; 75 timeout; 76 server error;",
        "  77 token or key refused. One 'Error:' line per failure on standard error.",
    ],
    run: { arguments in
        let server = try arguments.option("--server")
        let token = try arguments.option("--token") ?? ProcessInfo.processInfo.environment["TIDINGS_KECALEK_TOKEN"]
        let user = try arguments.option("--user")
        let store = try arguments.option("--store") ?? "kecalek-cache.sqlite"
        let keyText = try arguments.option("--key")
        let limit = try arguments.intOption("--limit", in: 1...1000) ?? 50
        var conversations: [String] = []
        while let conversation = try arguments.option("--conversation") { conversations.append(conversation) }
        var conversationKeys: [String: TidingsCrypto.SymmetricKey] = [:]
        while let pair = try arguments.option("--conversation-key") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, let key = symmetricKey(hex: parts[1]) else {
                throw UsageError(message: "Expected --conversation-key <id>=<64 hex digits>.")
            }
            conversationKeys[parts[0]] = key
        }
        try arguments.finish()
        try await runKecalekSync(
            KecalekSyncOptions(
                server: server, token: token, user: user, store: store, keyText: keyText, limit: limit,
                conversations: conversations, conversationKeys: conversationKeys))
    }
)

let kecalekShowCommand = Command(
    name: "show",
    abstract: "Print the cached conversations and their newest messages, offline and read-only.",
    usage: "kecalek show [--store <path>] [--key <hex>] [--conversation <id>]... [--limit <n>]",
    options: [
        storeOption, keyOption,
        "--conversation <id>     Show only this conversation; repeatable.",
        "--limit <n>             Newest messages per conversation (default: 10).",
    ],
    discussion: [
        "The file is only read: nothing is created, moved or replaced.",
        "EXIT STATUS: 65 a damaged file or not a Kecalek cache; 66 no file; 77 written with another key.",
    ],
    run: { arguments in
        let store = try arguments.option("--store") ?? "kecalek-cache.sqlite"
        let keyText = try arguments.option("--key")
        let limit = try arguments.intOption("--limit", in: 0...10_000) ?? 10
        var only: [String] = []
        while let conversation = try arguments.option("--conversation") { only.append(conversation) }
        try arguments.finish()
        try await runKecalekShow(
            store: store, key: try KecalekCacheKey.resolve(keyText, sandboxAllowed: true), only: only, limit: limit)
    }
)

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
