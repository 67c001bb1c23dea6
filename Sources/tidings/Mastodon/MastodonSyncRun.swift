import Foundation
import TidingsCore
import TidingsMastodon
import TidingsNet
import TidingsSandbox

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `tidings mastodon sync`: one `MastodonSync.syncNow` (capabilities, home, notifications, markers, the re-check of
/// the newest cached statuses);
/// exits non-zero, with one `Error:` line, when any step did not complete.
func runMastodonSync(_ options: MastodonSyncOptions) async throws {
    let progress = MastodonProgress(enabled: isatty(2) == 1)
    let database = try await MastodonConnection.openStore(options.store)
    defer { database.close() }
    let store = MastodonTimelineStore(database: database)
    let connection = await MastodonConnection(options)
    let (client, transport, target) = (connection.client, connection.counter, connection.target)
    let sync = MastodonSync(settings: MastodonPollSettings(preset: .manual))
    progress.say("Connecting to \(target)…")
    let engine = await sync.addAccount(client: client, store: store)

    let summary: MastodonSyncSummary
    do {
        // One library entry: capabilities, Home, notifications, markers, then the newest cached statuses asked
        // again, so what the server edited or deleted since the last run reaches the store.
        let report = try await sync.syncNow(account: engine.account) { step in
            switch step {
            case .capabilities: progress.say("Reading the server's capabilities…")
            case .home: progress.say("Refreshing the home timeline…")
            case .notifications: progress.say("Fetching notifications…")
            case .markers: progress.say("Syncing read markers…")
            case .recheck: progress.say("Re-checking the newest cached statuses for edits and deletions…")
            }
        }
        guard let report else { throw ToolFailure(ExitCode.software, "the account was not signed in") }
        let capabilities = report.capabilities
        let tiers = MastodonTierPolicy.tiers(
            capabilities: capabilities, app: MastodonAppState(foreground: true, online: true, isActiveAccount: true),
            push: .none, auth: .signedIn)
        progress.say(
            "Server \(capabilities.versionString); tier as the active account: \(tiers.streaming ? "streaming" : "polling")."
        )
        let entries = try await engine.entries()
        // A server with grouped notifications (v2) stores groups; an older one single notifications (v1).
        let notifications =
            capabilities.supportsGroupedNotifications
            ? try await engine.notificationGroups().count : try await engine.notifications().count
        let counts = transport.snapshot
        summary = MastodonSyncSummary(
            target: target, account: options.account, store: options.store, capabilities: capabilities,
            streaming: tiers.streaming, home: report.home, cached: entries.filter { !$0.isGap }.count,
            gaps: entries.filter(\.isGap).count, notifications: notifications, unread: report.unread,
            homeMarker: try await engine.localMarker(.home),
            notificationsMarker: try await engine.localMarker(
                .notifications), recheck: report.recheck, requests: counts.requests, minIDRequests: counts.minID)
    } catch {
        await sync.shutdown()
        throw mastodonFailure(error, target: target)
    }
    await sync.shutdown()
    summary.print(json: options.json)
}

/// Progress lines on standard error, only when it is a terminal (a pipe or a file gets the summary alone).
struct MastodonProgress: Sendable {
    let enabled: Bool

    func say(_ line: String) {
        if enabled { writeStandardError(line + "\n") }
    }
}

/// What a failed step means for the exit status; the message names the server's host, never the token.
func mastodonFailure(_ error: any Error, target: String) -> ToolFailure {
    if let error = error as? MastodonError {
        if error == .unauthorized || error == .needsReauthentication {
            return ToolFailure(ExitCode.noPermission, "\(target) refused the token; nothing more was synced.")
        }
        if error == .transport {
            return ToolFailure(ExitCode.unavailable, "Cannot reach \(target): \(error).")
        }
        if error == .rateLimited {
            return ToolFailure(ExitCode.temporaryFailure, "\(target) is rate limiting: \(error).")
        }
        return ToolFailure(ExitCode.protocolError, "\(target) answered with an error: \(error).")
    }
    if error is StoreError { return ToolFailure(ExitCode.ioError, "The store failed: \(error).") }
    return ToolFailure(ExitCode.software, "Internal error: \(error).")
}
