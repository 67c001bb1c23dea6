import Foundation
import Testing

@testable import tidings

/// `tidings demo --only push`: both modes, a duplicate suppressed, a group updated in place, quiet hours
/// holding and releasing, a digest raised — the same text every run (a virtual clock, a seeded sandbox).
@Suite(.timeLimit(.minutes(1))) struct PushDemoTests {
    @Test func thePushPartShowsEveryPathOfThePolicy() async throws {
        let first = await Runner(root: tidingsRoot, environment: [:]).capture(["demo", "--only", "push"])
        #expect(first.status == 0, "\(first.standardError)")
        let output = first.standardOutput
        // Content mode: raised from the decrypted payload; the poll then finds it raised.
        #expect(output.contains("push → alice (content): raised (push "))
        #expect(output.contains("carol mentioned you — dinner tomorrow, @alice?"))
        #expect(output.contains("alice: not raised (poll "))
        #expect(output.contains("): alreadyRaised"))
        // Wake mode: the push polls, the poll raises.
        #expect(output.contains("push → bob (wake): polled\n  bob: raised (poll "))
        // A group raised, then updated in place under the same identifier.
        let raised = try #require(output.range(of: "bob: raised (poll 99999999999999959) "))
        let updated = try #require(output.range(of: "bob: updated in place (poll 99999999999999960) "))
        let identifier = "bob@sandbox#group:favourite-99999999999999958"
        #expect(output[raised.upperBound...].hasPrefix(identifier))
        #expect(output[updated.upperBound...].hasPrefix(identifier))
        // Quiet hours hold, and the job at their end raises.
        #expect(
            output.contains(
                "push → alice (content): held (push 99999999999999962): quietHours until 2026-12-02T07:00:00Z"))
        #expect(output.contains("alice: raised (poll 99999999999999962)"))
        // The digest.
        #expect(output.contains("bob: held (poll 99999999999999964): digest until 2026-12-02T08:00:00Z"))
        #expect(output.contains("bob: digest raised (bob@sandbox#digest): 1 new notification — From Carol"))
        let second = await Runner(root: tidingsRoot, environment: [:]).capture(["demo", "--only", "push"])
        #expect(second.standardOutput == output)
    }
}
