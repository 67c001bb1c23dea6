// The push tests' second OS process: a notification extension on the app's store file, while the app
// (the test process) holds its own connection to it and writes.
//
// Usage (the subscription's keys in TIDINGS_PUSH_PRIVATE_KEY and TIDINGS_PUSH_AUTH, base64url, never on the
// command line):
//   PushExtensionChild decide <store path> <account> <push body file>
//     Decrypts the aes128gcm Web Push body and decides on it through the library's extension entry point,
//     MastodonPushExtensionDecider (the stored marker and groups, the group key, decideAndRecord): prints `decision raise <request id>` or `decision drop <reason>`
//     (hold: `decision hold <reason>`).
//   PushExtensionChild act <store path> <account> <push body file> <status id> <reply text>
//     As `decide`, then what the person tapped on the notification, recorded in the durable outboxes only (the
//     extension sends nothing; the app replays): a Reply to the notification's status (its Idempotency-Key
//     printed as `reply <row id> <key>`) and a Favourite of it (`favourite <row id>`). Mastodon's payload names
//     no status: the notification's actions carry its ID, as an app puts it in what it raised.
//   PushExtensionChild widget <snapshot path>
//     What a widget extension does: reads the app's widget snapshot file and prints one line per account,
//     `widget <account> unread <count> mentions <text>|<text>…` (newest first).
//
// Errors: one `error <description>` line on standard error; exit 64 for bad arguments, 1 otherwise.
import Foundation
import TidingsCore
import TidingsMastodon
import TidingsNet
import TidingsPush

func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("error \(message)\n".utf8))
    exit(status)
}

/// The test's store: the timeline, the policy's tables, the push keys and the reply outbox, as
/// `GlueFixture.schema` (Tests/TidingsPushTests/Glue) declares it; the test process migrates it first.
let schema = SQLiteSchema(
    tables: MastodonTimelineSchema.schema.tables + NotificationPolicyStore.tables + PushStoreSchema.schema.tables
        + NotificationReplyOutbox.tables,
    migrations: MastodonTimelineSchema.schema.migrations + [
        .init(version: MastodonTimelineSchema.schema.migrations.count + 1, name: "notification policy and push keys") {
            db in
            try NotificationPolicyStore.createTables(db)
            try NotificationReplyOutbox.createTables(db)
            for migration in PushStoreSchema.schema.migrations { try migration.body(db) }
        }
    ])

/// The extension is offline as far as these commands go: it records, the app sends.
struct Offline: MastodonTransport {
    struct NotSent: Error {}
    func response(for request: HTTPRequest) async throws -> HTTPResponse { throw NotSent() }
}

func run(_ arguments: [String]) async throws {
    let command = arguments[1]
    let (path, account, bodyPath) = (arguments[2], arguments[3], arguments[4])
    let environment = ProcessInfo.processInfo.environment
    guard let privateKey = environment["TIDINGS_PUSH_PRIVATE_KEY"], let auth = environment["TIDINGS_PUSH_AUTH"] else {
        fail("TIDINGS_PUSH_PRIVATE_KEY and TIDINGS_PUSH_AUTH are required", status: 64)
    }
    let keys = try WebPushSubscriptionKeys(base64URLPrivateKey: privateKey, base64URLAuthSecret: auth)
    let body = [UInt8](try Data(contentsOf: URL(fileURLWithPath: bodyPath)))
    // The library's extension path: the stored marker and groups, the group key, one write transaction. The app
    // holds its connection and writes meanwhile: wait for its write lock, never fail on it.
    let decider = MastodonPushExtensionDecider(
        account: account, path: path, schema: schema, cipher: nil,
        configuration: NotificationRaiserConfiguration(mode: .content, zone: .fixed(.zoneInfo(.utc))),
        busyTimeout: .seconds(30))
    let handling = try await decider.decide(
        IncomingWebPush(endpoint: URL(string: "https://push.invalid/child")!, body: body, contentEncoding: "aes128gcm"),
        keys: keys)
    guard case .decided(let decided) = handling else { fail("not decided: \(handling)", status: 1) }
    switch decided.decision {
    case .raise(let request), .update(let request): say("decision raise \(request.identifier)")
    case .hold(_, let reason): say("decision hold \(reason.rawValue)")
    case .drop(let reason): say("decision drop \(reason.rawValue)")
    }
    guard command == "act" else { return }
    // The actions go through the app's outboxes on a connection of the extension's own.
    let database = try await SQLiteDatabase.open(
        path: path, schema: schema, configuration: .init(busyTimeout: .seconds(30), checksIntegrityOnOpen: false))
    defer { database.close() }
    let statusID = arguments[5]
    let client = MastodonAPIClient(
        server: URL(string: "https://offline.invalid")!, accountKey: account,
        authorization: MastodonAuthorization(token: "unused: the extension sends nothing"), transport: Offline())
    let reply = try await NotificationReplyOutbox(database: database, client: client).enqueue(
        replyTo: ServerID(statusID), text: arguments[6])
    say("reply \(reply.id) \(reply.idempotencyKey)")
    let store = MastodonTimelineStore(database: database)
    let favourite = try await database.write { db in
        try store.enqueue(.favourite, target: ServerID(statusID), account: account, in: db)
    }
    say("favourite \(favourite.id)")
}

/// The widget's side: the snapshot the app wrote, read as a widget reads it.
func readWidget(_ path: String) throws {
    for line in try WidgetSnapshot.read(from: path).accounts {
        let mentions = line.recentMentions.map(\.text).joined(separator: "|")
        say("widget \(line.account) unread \(line.unreadCount) mentions \(mentions)")
    }
}

let arguments = CommandLine.arguments
guard
    (arguments.count == 5 && arguments.dropFirst().first == "decide") || (arguments.count == 7 && arguments[1] == "act")
        || (arguments.count == 3 && arguments[1] == "widget")
else {
    fail(
        "usage: PushExtensionChild decide|act <store> <account> <body file> [<status id> <reply text>] | widget <file>",
        status: 64)
}
do {
    if arguments[1] == "widget" { try readWidget(arguments[2]) } else { try await run(arguments) }
} catch {
    fail("\((error as? any TidingsError)?.description ?? "\(error)")", status: 1)
}
