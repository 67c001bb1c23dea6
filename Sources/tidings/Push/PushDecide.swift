import Foundation
import TidingsCore
import TidingsPush

/// `tidings push decrypt --store PATH --account HANDLE`: the notification policy's decision for the decrypted
/// Mastodon push, recorded in the policy store the way a notification extension would (issue 12's P2 path).
struct PushDecideOptions: Sendable {
    let storePath: String
    let account: String
    /// `--quiet-hours`: the window in the device's time zone; nil for none.
    var quietHours: QuietHours? = nil
}

extension PushOptions {
    /// `--store`: the notification policy store (created when missing).
    static let store = OptionSpec.value(
        "--store", "path",
        help: "Decide with the notification policy: the policy store's file (created when missing). Needs --account.")
    /// `--account`: whose notification it is.
    static let account = OptionSpec.value(
        "--account", "handle", help: "With --store: the account the push is for, e.g. alice@mastodon.social.")
    /// `--quiet-hours`: the account's quiet hours, so the decision reads the local time as an extension's would.
    static let quietHours = OptionSpec.value(
        "--quiet-hours", "HH:MM-HH:MM",
        help: "With --store: quiet hours in the device's time zone (22:00-07:00 spans midnight).")

    /// Reads `HH:MM-HH:MM` (hours 0–23, minutes 0–59).
    ///
    /// - Throws: ``ValidationError`` for anything else.
    static func parseQuietHours(_ text: String) throws -> QuietHours {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map {
            $0.split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
        }
        guard parts.count == 2, parts.allSatisfy({ $0.count == 2 }),
            let startHour = parts[0][0], let startMinute = parts[0][1], let endHour = parts[1][0],
            let endMinute = parts[1][1], [startHour, endHour].allSatisfy((0..<24).contains),
            [startMinute, endMinute].allSatisfy((0..<60).contains)
        else { throw ValidationError("--quiet-hours takes HH:MM-HH:MM, e.g. 22:00-07:00.") }
        return QuietHours(start: (startHour, startMinute), end: (endHour, endMinute))
    }
}

/// How the decision step opens its store: no integrity scan (it reads every page) and at most a second's wait for
/// another process's lock, so a memory- and time-limited extension process never stalls behind the app.
let pushDecisionStoreConfiguration = SQLiteDatabase.Configuration(
    busyTimeout: .seconds(1), checksIntegrityOnOpen: false)

/// Runs the policy on `plaintext`, a Mastodon Web Push payload, and prints the decision.
///
/// - Throws: ``ToolFailure`` `dataError` for a payload that is not a Mastodon notification, `temporaryFailure`
///   when the store is busy or cannot be opened.
func decidePush(_ plaintext: [UInt8], options: PushDecideOptions, json: Bool) async throws {
    let payload: JSONValue
    do {
        payload = try JSONValue(parsing: plaintext)
    } catch {
        throw ToolFailure(ExitCode.dataError, "The plaintext is not a Mastodon push payload: \(error).")
    }
    guard let candidate = NotificationCandidate(pushPayload: payload, account: options.account) else {
        throw ToolFailure(
            ExitCode.dataError,
            "The plaintext is not a Mastodon push payload the policy knows (notification_id, notification_type).")
    }
    let decision: NotificationDecision
    do {
        let database = try await SQLiteDatabase.open(
            path: options.storePath, schema: NotificationPolicyStore.schema,
            configuration: pushDecisionStoreConfiguration)
        let store = NotificationPolicyStore(database: database)
        let settings = NotificationSettings(quietHours: options.quietHours)
        // `TimeZone.current` loads ICU's zone data (with the calendar ~3 MB of P2's peak RSS); settings without
        // quiet hours or a digest never read the zone, so it is looked up only when they would.
        let timeZone = settings.usesLocalTime ? TimeZone.current : .gmt
        let context = NotificationPolicyContext(now: Date(), timeZone: timeZone, marker: nil)
        decision = try await store.decideAndRecord(candidate, settings: settings, context: context)
    } catch let error as StoreError {
        throw ToolFailure(ExitCode.temporaryFailure, "The policy store could not be used: \(error).")
    }
    Console.current.writeOutput(describe(decision, json: json) + "\n")
}

/// One line: `raise <id>: <title>` / `update <id>: <title>` / `hold until <date>: <reason>` / `drop: <reason>`, or
/// the same as a JSON object (`type: "decision"`, `action`, `identifier`, `title`, `body`, `until`, `reason`).
func describe(_ decision: NotificationDecision, json: Bool) -> String {
    var fields: [String: JSONValue] = ["type": .string("decision")]
    let text: String
    switch decision {
    case .raise(let request), .update(let request):
        let action = if case .raise = decision { "raise" } else { "update" }
        fields["action"] = .string(action)
        fields["identifier"] = .string(request.identifier)
        fields["title"] = .string(request.title.text)
        fields["body"] = .string(request.body.text)
        text = "\(action) \(request.identifier): \(request.title.text)"
    case .hold(let until, let reason):
        let date = until.formatted(.iso8601)
        fields["action"] = .string("hold")
        fields["until"] = .string(date)
        fields["reason"] = .string(reason.rawValue)
        text = "hold until \(date): \(reason.rawValue)"
    case .drop(let reason):
        fields["action"] = .string("drop")
        fields["reason"] = .string(reason.rawValue)
        text = "drop: \(reason.rawValue)"
    }
    return json ? JSONValue.object(fields).jsonString(sortedKeys: true) : text
}
