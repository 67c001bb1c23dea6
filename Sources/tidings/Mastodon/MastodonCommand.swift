import Foundation

/// `tidings mastodon`: sync a Mastodon account into a local store, or show the store offline.
let mastodonCommand = Command(
    name: "mastodon",
    abstract: "Sync a Mastodon (or Nextcloud Social) account into a local store, or show the store offline.",
    subcommands: [mastodonSyncCommand, mastodonWatchCommand, mastodonShowCommand]
)

let mastodonSyncCommand = Command(
    name: "sync",
    abstract: "One sync of the account: capabilities and tier, home timeline, notifications, markers.",
    options: MastodonOptions.connection + MastodonOptions.storage + [jsonOption],
    discussion: [
        "Without --server the sync runs against the sandbox in process. The sandbox does not outlive the",
        "  process: each run seeds it again with the same sample data (the same IDs), so a second run with the",
        "  same --store asks only for statuses newer than the stored ones (min_id) and finds none.",
        "Progress goes to standard error when it is a terminal; the summary to standard output.",
        "EXIT STATUS: 0 when every step synced; 64 usage; 69 server unreachable; 70 internal error;",
        "  74 the store could not be opened or written; 75 rate limited; 76 the server answered with an error;",
        "  77 token refused.",
        "",
        "JSON (--json): one object on standard output: target, account, store, version, nextcloudSocial,",
        "  streaming, tier (\"streaming\" or \"polling\"), home {inserted, gapInserted, cached, gaps},",
        "  notifications, unread, markers {home, notifications}, requests, minIDRequests.",
        "  On failure: {type: \"error\", kind, code, message}. The token is never printed.",
    ],
    validate: { parsed in
        try MastodonSyncOptions(
            server: parsed.string(MastodonOptions.server), token: parsed.string(MastodonOptions.token),
            store: parsed.string(MastodonOptions.store) ?? "mastodon-store.sqlite",
            account: parsed.string(MastodonOptions.account) ?? "default", json: parsed.flag(jsonOption))
    },
    run: { options in try await runMastodonSync(options) }
)

private let watchPushOption = OptionSpec.value(
    "--push", "mode", default: "content",
    help: "content, wake or off: subscribe a loopback Web Push endpoint and use pushes so.")

let mastodonWatchCommand = Command(
    name: "watch",
    abstract: "Keep the account synced (user stream where offered, polling otherwise), printing each change.",
    options: MastodonOptions.connection + MastodonOptions.storage + [watchPushOption, jsonOption],
    discussion: [
        "Runs as the active account of an app in the foreground until SIGINT or SIGTERM, then stops cleanly.",
        "Without --server it watches the in-process sandbox, where nothing changes on its own.",
        "Every poll goes through the notification policy: each notification it raises (or updates, holds,",
        "  drops) is printed as 'notification (raise, poll <id>): <title> — <body>'; the raised set is kept in",
        "  <store>.notifications, so nothing is raised twice across runs. With --push content|wake (default",
        "  content) a loopback Web Push endpoint (as `tidings push listen`) is subscribed with the server, and",
        "  each push is routed to the account: content mode decides from the decrypted payload (origin push),",
        "  wake mode polls. Against `tidings sandbox mastodon` the sandbox's real Web Push arrives there.",
        "EXIT STATUS: 0 after a clean stop on a signal; 64 usage; 69 server unreachable at start; 74 store;",
        "  76 the server answered with an error; 77 token refused (at start or later).",
        "",
        "JSON (--json): one object per line: ready {target, account, inserted, stream, push}; change {kind,",
        "  detail}; notification {decision, origin, id, identifier, title, body | reason, until}; stopped",
        "  {signal}. The token is never printed.",
    ],
    validate: { parsed in
        var options = try MastodonSyncOptions(
            server: parsed.string(MastodonOptions.server), token: parsed.string(MastodonOptions.token),
            store: parsed.string(MastodonOptions.store) ?? "mastodon-store.sqlite",
            account: parsed.string(MastodonOptions.account) ?? "default", json: parsed.flag(jsonOption))
        switch parsed.string(watchPushOption) ?? "content" {
        case "off": options.push = nil
        case "wake": options.push = .wake
        case "content": options.push = .content
        default: throw ValidationError("--push must be content, wake or off.")
        }
        return options
    },
    run: { options in try await runMastodonWatch(options) }
)

private let showLimitOption = OptionSpec.value(
    "--limit", "n", default: "20", help: "Newest timeline entries to print, 0 to 10000.")

/// What `tidings mastodon show` was asked to do, validated.
struct MastodonShowOptions: Sendable {
    var store: String
    var account: String
    var limit: Int
    var json = false
}

let mastodonShowCommand = Command(
    name: "show",
    abstract: "Print the stored home timeline offline, gaps shown as gaps; the file is only read.",
    options: MastodonOptions.storage + [showLimitOption, jsonOption],
    discussion: [
        "EXIT STATUS: 0; 64 usage; 65 the file is damaged or not a timeline store; 66 no file.",
        "",
        "JSON (--json): one object per line, each with a \"type\":",
        "  store   store, account, statuses, gaps",
        "  status  id, createdAt (or null), account (acct or null), text",
        "  gap     state (\"open\" or \"unfillable\")",
    ],
    validate: { parsed in
        MastodonShowOptions(
            store: parsed.string(MastodonOptions.store) ?? "mastodon-store.sqlite",
            account: parsed.string(MastodonOptions.account) ?? "default",
            limit: try parsed.int(showLimitOption, in: 0...10_000) ?? 20, json: parsed.flag(jsonOption))
    },
    run: { options in try await runMastodonShow(options) }
)
