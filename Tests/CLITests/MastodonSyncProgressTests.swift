import Foundation
import PeerSupport
import Testing

/// `tidings mastodon sync`'s progress, run as the real executable: on a terminal (a pseudo-terminal from
/// util-linux `script`) a line per step comes before the summary; through pipes standard error stays empty.
@Suite(.timeLimit(.minutes(2))) struct MastodonSyncProgressTests {
    static let steps = [
        "Connecting to sandbox…", "Reading the server's capabilities…", "Refreshing the home timeline…",
        "Fetching notifications…", "Syncing read markers…",
        "Re-checking the newest cached statuses for edits and deletions…", "tier as the active account: streaming",
    ]

    @Test func onATerminalEachStepIsToldBeforeTheSummary() async throws {
        let store = try MastodonCommandTests.temporaryStore()
        let command = "\(ToolRun.executable.path) mastodon sync --store \(store)"
        let outcome = try await ChildProcess.run(
            executable: "/usr/bin/script", arguments: ["-qec", command, "/dev/null"], timeout: .seconds(60))
        #expect(outcome.termination == .exited(0))
        let text = String(decoding: outcome.standardOutput, as: UTF8.self)
        var rest = text[...]
        for step in Self.steps {
            let found = try #require(
                rest.range(of: step), "\(step) missing or out of order in \(text.debugDescription)")
            rest = rest[found.upperBound...]
        }
        // The summary comes after the last step.
        #expect(rest.contains("Synced "), "\(text.debugDescription)")
    }

    @Test func throughPipesStandardErrorStaysEmpty() async throws {
        let store = try MastodonCommandTests.temporaryStore()
        let outcome = try await ChildProcess.run(
            executable: ToolRun.executable.path, arguments: ["mastodon", "sync", "--store", store],
            timeout: .seconds(60))
        #expect(outcome.termination == .exited(0))
        #expect(outcome.standardError.isEmpty, "\(String(decoding: outcome.standardError, as: UTF8.self))")
        let text = String(decoding: outcome.standardOutput, as: UTF8.self)
        for step in Self.steps.dropFirst(2) { #expect(!text.contains(step)) }
    }
}
