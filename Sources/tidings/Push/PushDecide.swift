import Foundation
import TidingsCore
import TidingsMastodon
import TidingsPush

/// `tidings push decrypt --store PATH --account HANDLE`: the notification policy's decision for the decrypted
/// Mastodon push, recorded in the policy store the way a notification extension would (issue 12's P2 path).
struct PushDecideOptions: Sendable {
    let storePath: String
    let account: String
    /// `--quiet-hours`: the window in the device's time zone; nil for none.
    var quietHours: QuietHours? = nil
    /// `--digest`: the digest's hours of the day; empty for immediate delivery.
    var digestHours: [Int] = []
    /// `--time-zone`: the zone read instead of the device's; nil for the device's.
    var zone: ZoneInfo? = nil

    /// The settings the decision runs under: every category on, the given quiet hours and digest (urgent
    /// mentions wait for the digest like everything else).
    var settings: NotificationSettings {
        NotificationSettings(
            quietHours: quietHours,
            delivery: digestHours.isEmpty ? .immediately : .digest(hours: digestHours, urgentMentionsAtOnce: false))
    }
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

    /// `--digest`: deliver as a digest at these hours.
    static let digest = OptionSpec.value(
        "--digest", "H[,H…]",
        help: "With --store: deliver as a digest at these hours of the day (one to four, 0-23), e.g. 8,18.")
    /// `--time-zone`: the zone quiet hours and digests are read in.
    static let timeZone = OptionSpec.value(
        "--time-zone", "identifier",
        help: "With --store: read quiet hours and digest hours in this zone (e.g. Europe/Berlin), not the device's.")

    /// Reads `H[,H…]`: one to four hours 0–23.
    ///
    /// - Throws: ``ValidationError`` for anything else.
    static func parseDigestHours(_ text: String) throws -> [Int] {
        let hours = text.split(separator: ",", omittingEmptySubsequences: false).map { Int($0) }
        guard (1...4).contains(hours.count), hours.allSatisfy({ $0.map((0..<24).contains) ?? false }) else {
            throw ValidationError("--digest takes one to four hours 0-23 separated by commas, e.g. 8,18.")
        }
        return hours.compactMap { $0 }
    }

    /// Reads a zone identifier and its TZif file from the system's zone directory.
    ///
    /// - Throws: ``ValidationError`` when it is not an identifier or its file cannot be read.
    static func parseTimeZone(_ text: String) throws -> ZoneInfo {
        do {
            return try ZoneInfo.named(text)
        } catch {
            throw ValidationError("--time-zone: no usable zone '\(text)' (\(error)).")
        }
    }

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

/// The store `--store` names: the engine's timeline tables (its notifications marker and v2 groups), the policy's
/// and the push keys', as an app's store holds them, so the decision reads what an extension reads.
let pushDecisionSchema = SQLiteSchema(
    tables: MastodonTimelineSchema.schema.tables + NotificationPolicyStore.tables + PushStoreSchema.schema.tables,
    migrations: MastodonTimelineSchema.schema.migrations + [
        .init(version: MastodonTimelineSchema.schema.migrations.count + 1, name: "notification policy and push keys") {
            db in
            try NotificationPolicyStore.createTables(db)
            for migration in PushStoreSchema.schema.migrations { try migration.body(db) }
        }
    ])

/// Decrypts `push` with `keys` and runs the notification policy on it through the library's extension path
/// (``MastodonPushExtensionDecider``: the stored marker and groups, the group key, one write transaction), and
/// prints the decision.
///
/// - Throws: ``ToolFailure`` `dataError` for a body that does not decrypt or a payload that is not a Mastodon
///   notification, `temporaryFailure` when the store is busy or cannot be opened.
func decidePush(_ push: IncomingWebPush, keys: WebPushSubscriptionKeys, options: PushDecideOptions, json: Bool)
    async throws
{
    // `TimeZone.current` and a Foundation calendar load ICU's zone data (~2 MB of P2's peak RSS): the zone is
    // read from its TZif file instead, and only when the settings read the local time at all (the decider's rule).
    let zone: NotificationZoneSource = options.zone.map { .fixed(.zoneInfo($0)) } ?? .device
    let decider = MastodonPushExtensionDecider(
        account: options.account, path: options.storePath, schema: pushDecisionSchema, cipher: nil,
        configuration: NotificationRaiserConfiguration(settings: options.settings, mode: .content, zone: zone))
    let handling: PushHandling
    do {
        handling = try await decider.decide(push, keys: keys)
    } catch let error as StoreError {
        throw ToolFailure(ExitCode.temporaryFailure, "The policy store could not be used: \(error).")
    }
    switch handling {
    case .decided(let decided):
        Console.current.writeOutput(describe(decided.decision, json: json) + "\n")
    case .unusable(let reason, _):
        throw ToolFailure(ExitCode.dataError, "The push is refused: \(reason).")
    case .woke, .wakeRequested:
        throw ToolFailure(ExitCode.software, "The push was not decided in content mode.")
    }
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
        // Not `formatted(.iso8601)`: that loads ICU's data, ~2.4 MB of P2's peak for one hold time.
        let date = ISO8601UTC.string(from: until)
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
