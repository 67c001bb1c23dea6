import Testing
import TidingsCore

@testable import TidingsMastodon

/// Beside an open stream the account polls on the 5-minute safety net; while its timeline poll reports newer
/// statuses left on the server (the engine's page bound), it polls at an interacting reader's interval of the
/// table (30 s on Normal), however idle the app, until caught up.
@Suite(.timeLimit(.minutes(1))) struct MastodonPollTimelineBacklogTests {
    @Test func aTimelineBacklogPollsOnTheTableBesideTheStreamUntilCaughtUp() async throws {
        let sandbox = await MastodonSandboxFixture()
        let capabilities = MastodonCapabilities(try await sandbox.client().instanceV2())
        let fixture = await PollingFixture()
        await fixture.scheduler.updateAccount("a", capabilities: capabilities, push: .none)
        await fixture.scheduler.setStreamOpen(true, account: "a")
        #expect(await fixture.scheduler.plan(for: "a")?.schedule == .every(.seconds(300)))
        await fixture.advance(300)
        #expect(await fixture.tickSeconds() == [0, 300])

        await fixture.target.setTimelineBacklog(true)
        await fixture.advance(300)
        #expect(await fixture.tickSeconds() == [0, 300, 600])
        // Ten minutes without interaction (an idle reader would get 60 s): a backlog goes at an interacting reader's
        // 30 s, not the net's 300 s.
        #expect(await fixture.scheduler.plan(for: "a")?.schedule == .every(.seconds(30)), "the table, not the net")
        await fixture.advance(30)
        await fixture.target.setTimelineBacklog(false)
        await fixture.advance(30)
        #expect(await fixture.tickSeconds() == [0, 300, 600, 630, 660])
        #expect(await fixture.scheduler.plan(for: "a")?.schedule == .every(.seconds(300)), "caught up: the net")
        await fixture.advance(299)
        #expect(await fixture.tickSeconds().count == 5)
        await fixture.advance(1)
        #expect(await fixture.tickSeconds() == [0, 300, 600, 630, 660, 960])
        await fixture.scheduler.shutdown()
    }

    /// The stream opens while a tick waits for the engine's backlog answer: the tick's result must not undo it
    /// (it once stored the whole account it had read before waiting, so the account stayed on the table).
    @Test func aStreamThatOpensWhileATickWaitsKeepsTheSafetyNet() async throws {
        let sandbox = await MastodonSandboxFixture()
        let capabilities = MastodonCapabilities(try await sandbox.client().instanceV2())
        let fixture = await PollingFixture()
        let scheduler = fixture.scheduler
        await scheduler.updateAccount("a", capabilities: capabilities, push: .none)
        await scheduler.setStreamOpen(false, account: "a")
        #expect(await scheduler.plan(for: "a")?.schedule == .every(.seconds(30)))
        await fixture.target.whileAskedForTheTimelineBacklog {
            await scheduler.setStreamOpen(true, account: "a")
        }
        await fixture.advance(30)
        #expect(await fixture.tickSeconds() == [0, 30])
        #expect(await scheduler.plan(for: "a")?.schedule == .every(.seconds(300)), "the stream is open")
        await scheduler.shutdown()
    }
}
