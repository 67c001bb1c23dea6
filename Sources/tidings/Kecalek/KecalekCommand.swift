import Foundation
import TidingsCore
import TidingsKecalek

/// `tidings kecalek`: sync a Kecalek server into the encrypted cache, or show the cache offline.
let kecalekCommand = Command(
    name: "kecalek",
    abstract: "Sync the Kecalek messenger into an encrypted local cache, or show the cache offline.",
    subcommands: [kecalekSyncCommand, kecalekShowCommand]
)

private let userOption = OptionSpec.value(
    "--user", "id",
    help: "Who is syncing; required with --server (mark_read skips their own messages). The sandbox's default is alice."
)
private let syncConversationOption = OptionSpec.repeating(
    "--conversation", "id", help: "A conversation to sync (default: every sandbox conversation).")
// The value name prints as `<id>=<hex>`: one value made of two parts.
private let conversationKeyOption = OptionSpec.repeating(
    "--conversation-key", "id>=<hex", help: "A conversation's AES-256-GCM key; one per --conversation with --server.")
private let syncLimitOption = OptionSpec.value(
    "--limit", "n", default: "50", help: "Messages per conversation page, 1 to 1000.")

let kecalekSyncCommand = Command(
    name: "sync",
    abstract: "Connect, sync conversations incrementally, print what crossed the wire and what changed.",
    options: KecalekOptions.connection + [userOption] + KecalekOptions.cache.options + [
        syncConversationOption, conversationKeyOption, syncLimitOption, jsonOption,
    ],
    discussion: [
        "EXIT STATUS: 0 when every conversation synced; 64 usage; 65 a damaged cache or undecryptable",
        "  conversation; 69 server unreachable; 74 the cache could not be written; 75 timeout; 76 server error;",
        "  77 token or key refused. One 'Error:' line per failure on standard error.",
        "",
        "JSON (--json): one object per line, each with a \"type\"; the exit status is the same as without it.",
        "  start         target, user, store, key (\"own\" or \"sandbox-demo\")",
        "  recovery      message (a damaged cache moved aside or an old one rebuilt)",
        "  conversation  conversation, source (incremental|full|cache|unavailable), synced, shown, new, deleted,",
        "                markedRead, skipped, bytesSent, bytesReceived, gap",
        "  total         bytesSent, bytesReceived",
        "  store         conversation, messages, added, newest (timestamp or null)",
        "  error         kind (the sysexits name: usage, dataerr, noinput, unavailable, software, ioerr,",
        "                tempfail, protocol, noperm), code, message, conversation (when it concerns one)",
        "  Tokens and keys are never printed.",
    ],
    validate: { parsed in
        var conversationKeys: [String: TidingsCrypto.SymmetricKey] = [:]
        for pair in parsed.strings(conversationKeyOption) {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, let key = symmetricKey(hex: parts[1]) else {
                throw ValidationError("Expected --conversation-key <id>=<64 hex digits>.")
            }
            conversationKeys[parts[0]] = key
        }
        let options = KecalekSyncOptions(
            server: parsed.string(KecalekOptions.server), token: parsed.string(KecalekOptions.token),
            user: parsed.string(userOption), store: parsed.string(KecalekOptions.store) ?? "kecalek-cache.sqlite",
            keyText: parsed.string(KecalekOptions.key), limit: try parsed.int(syncLimitOption, in: 1...1000) ?? 50,
            conversations: parsed.strings(syncConversationOption), conversationKeys: conversationKeys,
            json: parsed.flag(jsonOption))
        _ = try options.plan()
        return options
    },
    run: { options in try await runKecalekSync(options) }
)

private let showConversationOption = OptionSpec.repeating("--conversation", "id", help: "Show only this conversation.")
private let showLimitOption = OptionSpec.value(
    "--limit", "n", default: "10", help: "Newest messages per conversation, 0 to 10000.")

/// What `tidings kecalek show` was asked to do, validated.
struct KecalekShowOptions: Sendable {
    var store: String
    var key: KecalekCacheKey
    var only: [String]
    var limit: Int
    var json = false
}

let kecalekShowCommand = Command(
    name: "show",
    abstract: "Print the cached conversations and their newest messages, offline and read-only.",
    options: KecalekOptions.cache + [showConversationOption, showLimitOption, jsonOption],
    discussion: [
        "The file is only read: nothing is created, moved or replaced.",
        "EXIT STATUS: 65 a damaged file or not a Kecalek cache; 66 no file; 77 written with another key.",
        "",
        "JSON (--json): one object per line, each with a \"type\"; the exit status is the same as without it.",
        "  recovery      message (an earlier sync moved a damaged cache aside)",
        "  cache         store, key (\"own\" or \"sandbox-demo\"), conversations",
        "  conversation  conversation, cached, newest (timestamp or null)",
        "  message       conversation, id, createdAt, sender, text (or null), pinned, reactions (emoji list)",
        "  error         kind (sysexits name), code, message",
    ],
    validate: { parsed in
        KecalekShowOptions(
            store: parsed.string(KecalekOptions.store) ?? "kecalek-cache.sqlite",
            key: try KecalekCacheKey.resolve(parsed.string(KecalekOptions.key), sandboxAllowed: true),
            only: parsed.strings(showConversationOption), limit: try parsed.int(showLimitOption, in: 0...10_000) ?? 10,
            json: parsed.flag(jsonOption))
    },
    run: { options in try await runKecalekShow(options) }
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
