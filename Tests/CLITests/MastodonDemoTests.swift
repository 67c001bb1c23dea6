import Foundation
import Testing

@testable import tidings

/// `tidings demo --only mastodon`: the same stretch every run, with its tier, gap and marker.
@Suite(.timeLimit(.minutes(1))) struct MastodonDemoTests {
    @Test func theMastodonPartShowsTheTierAGapMadeAndFilledAndAMarkerSynced() async throws {
        let first = await Runner(root: tidingsRoot, environment: [:]).capture(["demo", "--only", "mastodon"])
        #expect(first.status == 0, "\(first.standardError)")
        let output = first.standardOutput
        #expect(output.contains("Tier in the foreground: user stream + polling every 5 min as a safety net"))
        #expect(output.contains("cold load: 30 statuses"))
        #expect(output.contains("39 fetched with min_id right above the stored newest, a gap left above them"))
        #expect(output.contains("timeline: open gap · 69 statuses"))
        #expect(output.contains("6 statuses were in it, closed; then 0 newer on top."))
        #expect(output.contains("timeline: 75 statuses\n"))
        #expect(output.contains("home marker"))
        #expect(output.contains("(1 POST), 0 unread"))
        // A virtual clock and a seeded sandbox: the same text every run.
        let second = await Runner(root: tidingsRoot, environment: [:]).capture(["demo", "--only", "mastodon"])
        #expect(second.standardOutput == output)
    }
}
