import Foundation

/// `tidings openmates`: run the phased sync into the offline store, or show the store offline.
let openMatesCommand = Command(
    name: "openmates",
    abstract: "Sync OpenMates chats into the offline store (phased sync), or show the store offline.",
    subcommands: [openMatesSyncCommand, openMatesShowCommand]
)

/// The options the `tidings openmates` commands share, declared once.
enum OpenMatesOptions {
    /// `--store`: the store file.
    static let store = OptionSpec.value(
        "--store", "path", default: "openmates-store.sqlite", environment: "TIDINGS_OPENMATES_STORE",
        help: "The offline store file.")
    /// `--server`: a real server's origin instead of the sandbox.
    static let server = OptionSpec.value(
        "--server", "url", environment: "TIDINGS_OPENMATES_SERVER",
        help: "The server's ws:// or wss:// origin; /v1/ws?sessionId=… is appended (default: the sandbox).")
    /// `--session`: the session ID sent as `sessionId`.
    static let session = OptionSpec.value(
        "--session", "id", help: "The session's ID, sent as sessionId (default: a fresh UUID).")
    /// `--token`: a WebSocket token, sent as the `token` query parameter (as the server reads it), never printed.
    static let token = OptionSpec.value(
        "--token", "token", environment: "TIDINGS_OPENMATES_TOKEN",
        help: "A WebSocket token, sent in the URL's query as the server requires; never printed.")
    /// `--cookie`: the session cookie header, never printed.
    static let cookie = OptionSpec.value(
        "--cookie", "cookie", environment: "TIDINGS_OPENMATES_COOKIE",
        help: "The session's Cookie header value (auth_refresh_token=…); never printed.")
    /// `--timeout`: how long to wait for the sync to complete.
    static let timeout = OptionSpec.value(
        "--timeout", "seconds", default: "30", help: "How long to wait for the sync to complete, 1 to 3600.")
    /// `--prefetch`: run the offline prefetch after the sync.
    static let prefetch = OptionSpec.flag(
        "--prefetch",
        help: "After a completed sync, prefetch older chats (POST /v1/sync/offline-prefetch from cursor 10, chunks "
            + "of 3, 2 s apart, until done); with --server it needs --cookie with auth_refresh_token.")
    /// `--reset`: start the store over first.
    static let reset = OptionSpec.flag(
        "--reset", help: "Start the store over first (resetLocalStore: server data removed, pending actions kept).")
}

/// What `tidings openmates sync` was asked to do, validated.
struct OpenMatesSyncOptions: Sendable {
    var server: URL?
    var session: String
    var token: String?
    var cookie: String?
    var store: String
    var timeout: Int
    var reset: Bool
    var json: Bool
    /// Run the offline prefetch after the sync; with a server, with this refresh token (from `--cookie`).
    var prefetch = false
    var refreshToken: String?
}

let openMatesSyncCommand = Command(
    name: "sync",
    abstract: "Connect, run one phased sync into the store, print what crossed the wire and what changed.",
    options: [
        OpenMatesOptions.server, OpenMatesOptions.session, OpenMatesOptions.token, OpenMatesOptions.cookie,
        OpenMatesOptions.store, OpenMatesOptions.timeout, OpenMatesOptions.reset, OpenMatesOptions.prefetch,
        jsonOption,
    ],
    discussion: [
        "EXIT STATUS: 0 when the sync completed (and, with --prefetch, the prefetch said done or reached the",
        "  10,000-message cap); 64 usage; 69 the server could not be reached or refused the login; 74 the store",
        "  could not be opened or written; 75 the sync was still pending at --timeout (the server reported chats",
        "  that had not arrived), or the prefetch failed or had not finished within another --timeout. Tokens and",
        "  cookies are never printed. Against the sandbox the prefetch's 2 s spacing runs on a virtual clock.",
        "",
        "JSON (--json): one object per line, each with a \"type\":",
        "  start    target, store",
        "  traffic  direction (sent|received), counts (by event type)",
        "  store    chats, metadataOnly, messages, embeds, embedKeys, suggestions, before (the same, before)",
        "  prefetch chunks, chats, messages (stored by the prefetch), cursors, done, state (--prefetch)",
        "  status   sync (complete|pending), connection, serverChatCount",
        "  error    kind, code, message",
    ],
    validate: { parsed in
        var server: URL?
        if let text = parsed.string(OpenMatesOptions.server) {
            guard let url = URL(string: text), ["ws", "wss"].contains(url.scheme ?? ""), url.host != nil else {
                throw ValidationError("--server must be a ws:// or wss:// origin.")
            }
            guard parsed.string(OpenMatesOptions.token) != nil || parsed.string(OpenMatesOptions.cookie) != nil else {
                throw ValidationError("--server needs --token <token> or --cookie <cookie>.")
            }
            server = url
        }
        if parsed.string(OpenMatesOptions.token) != nil, parsed.string(OpenMatesOptions.cookie) != nil {
            throw ValidationError("Pass --token or --cookie, not both.")
        }
        var options = OpenMatesSyncOptions(
            server: server, session: parsed.string(OpenMatesOptions.session) ?? UUID().uuidString,
            token: parsed.string(OpenMatesOptions.token), cookie: parsed.string(OpenMatesOptions.cookie),
            store: parsed.string(OpenMatesOptions.store) ?? "openmates-store.sqlite",
            timeout: try parsed.int(OpenMatesOptions.timeout, in: 1...3600) ?? 30,
            reset: parsed.flag(OpenMatesOptions.reset), json: parsed.flag(jsonOption))
        options.prefetch = parsed.flag(OpenMatesOptions.prefetch)
        if options.prefetch, server != nil {
            // The prefetch endpoint authenticates with the auth_refresh_token cookie only.
            options.refreshToken = options.cookie.flatMap(openMatesRefreshToken(inCookie:))
            guard options.refreshToken != nil else {
                throw ValidationError("--prefetch with --server needs --cookie with auth_refresh_token=….")
            }
        }
        return options
    },
    run: { options in try await runOpenMatesSync(options) }
)

/// The `auth_refresh_token` value of a Cookie header value, if it has one.
func openMatesRefreshToken(inCookie header: String) -> String? {
    for pair in header.split(separator: ";") {
        let parts = pair.split(separator: "=", maxSplits: 1)
        guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == "auth_refresh_token" else { continue }
        let value = parts[1].trimmingCharacters(in: .whitespaces)
        if !value.isEmpty { return value }
    }
    return nil
}

private let showChatOption = OptionSpec.repeating("--chat", "id", help: "Show only this chat.")
private let showLimitOption = OptionSpec.value(
    "--limit", "n", default: "5", help: "Newest messages per chat, 0 to 10000.")

private let showMasterKeyFileOption = OptionSpec.value(
    "--master-key-file", "path", environment: "TIDINGS_OPENMATES_MASTER_KEY_FILE",
    help:
        "A file holding the user's master key (base64, or the raw 16 or 32 bytes) to print titles, messages and embeds in clear; without it (or TIDINGS_OPENMATES_MASTER_KEY), content stays encrypted."
)

/// What `tidings openmates show` was asked to do, validated.
struct OpenMatesShowOptions: Sendable {
    var store: String
    var only: [String]
    var limit: Int
    var json: Bool
    /// Where the master key comes from; nil: print content as encrypted.
    var masterKey: OpenMatesMasterKeySource?
}

let openMatesShowCommand = Command(
    name: "show",
    abstract: "Print the stored chats (server order) and their newest messages, offline.",
    options: [OpenMatesOptions.store, showChatOption, showLimitOption, showMasterKeyFileOption, jsonOption],
    discussion: [
        "EXIT STATUS: 65 the master key file or TIDINGS_OPENMATES_MASTER_KEY holds no key; 66 no store file, or",
        "  no master key file; 74 the store could not be read.",
        "Content is end-to-end encrypted. Without a master key, messages print their role, time and size only.",
        "With one (--master-key-file, or base64 in TIDINGS_OPENMATES_MASTER_KEY; never an argument, never",
        "  printed), titles, messages and embeds print in clear; a value that does not decrypt prints its error",
        "  kind, and a hidden chat (its key wrapped by the hide password's secret) prints as locked.",
        "",
        "JSON (--json): one object per line: store (chats, decrypted), chat (id, title: text or null, pinned,",
        "  hidden, access: visible|hidden-locked|hidden-unlocked|unavailable|encrypted, content:",
        "  complete|partial|metadata-only, messages, unread), message (chat, id, role, createdAt, bytes, text or",
        "  error), embed (chat, id, type, content, preview or error; with a key only), error.",
    ],
    validate: { parsed in
        OpenMatesShowOptions(
            store: parsed.string(OpenMatesOptions.store) ?? "openmates-store.sqlite",
            only: parsed.strings(showChatOption), limit: try parsed.int(showLimitOption, in: 0...10_000) ?? 5,
            json: parsed.flag(jsonOption),
            masterKey: OpenMatesMasterKeySource.resolve(
                file: parsed.string(showMasterKeyFileOption), environment: ProcessInfo.processInfo.environment))
    },
    run: { options in try await runOpenMatesShow(options) }
)
