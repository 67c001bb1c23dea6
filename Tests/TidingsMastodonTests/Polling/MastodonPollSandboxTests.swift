import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsNet
import TidingsSandbox
import TidingsSandboxKit

/// A transport that records every request the sandbox answered: virtual second, account, path, status.
final class RecordingTransport: MastodonTransport {
    struct Entry: Sendable {
        var second: Double
        var account: String
        var path: String
        var status: Int
        var retryAfter: Int?
    }

    private let inner: MastodonSandboxTransport
    private let clock: TestClock
    private let entries = LockedState([Entry]())

    init(_ inner: MastodonSandboxTransport, clock: TestClock) {
        self.inner = inner
        self.clock = clock
    }

    var log: [Entry] { entries.withLock { $0 } }

    func response(for request: HTTPRequest) async throws -> HTTPResponse {
        let second = clock.now.offset.inSeconds
        let response = try await inner.response(for: request)
        let entry = Entry(
            second: second, account: request.rateLimitAccount ?? "", path: request.url.path, status: response.status,
            retryAfter: response.headers.values(for: "Retry-After").first.flatMap { Int($0) })
        entries.withLock { $0.append(entry) }
        return response
    }
}

/// The scheduler through the real `MastodonAPIClient` against the in-process Mastodon sandbox: its
/// 429s and `Retry-After`, its `X-RateLimit-*` headers, and one host's politeness bucket.
@Suite(.timeLimit(.minutes(1))) struct MastodonPollSandboxTests {
    struct World {
        let fixture: MastodonSandboxFixture
        let faults = SandboxFaultSwitch()
        let transport: RecordingTransport
        let budget: RateBudget
        let scheduler: MastodonPollScheduler
        var loops: [PollLoop] = []

        init(
            variant: MastodonSandboxVariant = .mastodon, budget configuration: RateBudget.Configuration = .mastodon,
            settings: MastodonPollSettings = MastodonPollSettings()
        ) async {
            fixture = await MastodonSandboxFixture(variant: variant)
            let http = fixture.server.httpServer(faults: faults, clock: fixture.clock)
            transport = RecordingTransport(MastodonSandboxTransport(server: http), clock: fixture.clock)
            budget = RateBudget(configuration: configuration, clock: fixture.clock, wallClock: fixture.now)
            scheduler = MastodonPollScheduler(clock: fixture.clock, settings: settings, random: { 0.5 })
        }

        /// Adds a sandbox account polled through a storeless target; `reserve` for its budget gate.
        mutating func addAccount(_ name: String, reserve: Int = 10) async {
            let token = "\(name)-token"
            if name != "alice" { _ = await fixture.server.addAccount(username: name, token: token) }
            let key = "\(name)@sandbox.invalid"
            let client = MastodonAPIClient(
                server: URL(string: "https://sandbox.invalid")!, accountKey: key,
                authorization: MastodonAuthorization(token: token), transport: transport, budget: budget,
                now: fixture.now)
            let gate = PollBudgetGate(budget: budget, host: "sandbox.invalid", account: key, reserve: reserve)
            await scheduler.addAccount(
                MastodonPollAccount(key: key, target: MastodonStorelessPollTarget(client: client), gate: gate))
            loops.append(await scheduler.pollLoop(for: key)!)
        }

        func run(seconds: Int64) async {
            await PollLoopDriver.run(
                loops, clock: fixture.clock, until: fixture.clock.now.advanced(by: .seconds(seconds)))
        }
    }

    @Test func theSandboxsRetryAfterHoldsEveryRequestToTheSecond() async {
        var world = await World()
        world.faults.add(
            .tooManyRequests(retryAfterSeconds: 90), on: .path("/api/v2/notifications/unread_count"), times: 1)
        await world.scheduler.appStateChanged(.activeAccount("alice@sandbox.invalid"))
        await world.scheduler.appStateChanged(.visibleTimeline("home"))
        await world.addAccount("alice")
        await world.run(seconds: 150)
        let log = world.transport.log
        #expect(log.first?.status == 429)
        #expect(log.first?.retryAfter == 90)
        #expect(log.dropFirst().allSatisfy { $0.second >= 90 }, "nothing before Retry-After ends")
        #expect(log.dropFirst().first?.second == 90, "and the poll resumes when it ends")
        #expect(log.filter { $0.status == 429 }.count == 1)
        let ticks = log.filter { $0.path.hasSuffix("unread_count") }.map(\.second)
        #expect(ticks == [0, 90, 120], "every 30 s, then 60 s once idle for 2 minutes (due at 180)")
        await world.scheduler.shutdown()
    }

    @Test func remainingAtTheReservePausesPollingUntilTheResetSoNo429Comes() async {
        var variant = MastodonSandboxVariant.mastodon
        variant.requestsPerWindow = 30
        var world = await World(variant: variant, settings: MastodonPollSettings(preset: .frequent))
        await world.scheduler.appStateChanged(.activeAccount("alice@sandbox.invalid"))
        await world.scheduler.appStateChanged(.visibleTimeline("home"))
        await world.addAccount("alice", reserve: 10)
        for _ in 0..<6 {
            await world.scheduler.appStateChanged(.interaction)
            await world.run(seconds: 300)
        }
        let log = world.transport.log
        #expect(!log.isEmpty)
        #expect(log.allSatisfy { $0.status == 200 }, "never a 429: \(log.filter { $0.status != 200 }.map(\.second))")
        // The sandbox's windows start at a request and last 300 s; at most 30 − 10 + the last tick's
        // requests go in one (a tick already under way finishes).
        var windowStart = log[0].second
        var count = 0
        var largest = 0
        for entry in log {
            if entry.second - windowStart >= 300 {
                windowStart = entry.second
                count = 0
            }
            count += 1
            largest = max(largest, count)
        }
        #expect(largest <= 22 && largest >= 20, "\(largest)")
        let paused = zip(log.dropFirst(), log).map { $0.second - $1.second }.max() ?? 0
        #expect(paused > 60, "polling paused for the reset instead of every 15 s")
        await world.scheduler.shutdown()
    }

    @Test func accountsOnOneHostShareItsPolitenessBucket() async {
        var world = await World(
            budget: RateBudget.Configuration(requestsPerWindow: 6, window: .seconds(300)),
            settings: MastodonPollSettings(preset: .frequent))
        await world.scheduler.appStateChanged(.activeAccount(nil))
        for name in ["alice", "carol", "dave", "erin", "frank"] { await world.addAccount(name, reserve: 0) }
        await world.run(seconds: 3600)
        let log = world.transport.log
        // Alone, each account would tick every 90 s (40 requests an hour each, 200 together); the shared
        // bucket lets 6 go at once and one every 50 s after that.
        #expect(log.count <= 6 + 72, "\(log.count)")
        #expect(log.count >= 60, "\(log.count)")
        #expect(Set(log.map(\.account)).count == 5, "every account still polls")
        #expect(log.allSatisfy { $0.status == 200 })
        await world.scheduler.shutdown()
    }
}

/// The tiers from real capabilities (the sandbox's instance advertises a streaming URL).
@Suite(.timeLimit(.minutes(1))) struct MastodonPollTierTests {
    @Test func besideAStreamPollingIsASafetyNetUntilTheStreamGivesUp() async throws {
        let sandbox = await MastodonSandboxFixture()
        let capabilities = MastodonCapabilities(try await sandbox.client().instanceV2())
        #expect(capabilities.offersStreaming)
        let fixture = await PollingFixture()
        await fixture.scheduler.updateAccount("a", capabilities: capabilities, push: .none)
        #expect(await fixture.scheduler.plan(for: "a")?.schedule == .every(.seconds(300)))
        await fixture.scheduler.updateAccount("a", capabilities: capabilities, push: .active)
        #expect(await fixture.scheduler.plan(for: "a")?.schedule == .every(.seconds(600)))
        await fixture.advance(599)
        #expect(await fixture.tickSeconds() == [0])
        await fixture.advance(1)
        #expect(await fixture.tickSeconds() == [0, 600])
        await fixture.scheduler.appStateChanged(.interaction)
        #expect(await fixture.scheduler.plan(for: "a")?.schedule == .every(.seconds(600)))
        await fixture.scheduler.setStreamOpen(false, account: "a")
        #expect(await fixture.scheduler.plan(for: "a")?.schedule == .every(.seconds(30)))
        await fixture.advance(30)
        #expect(await fixture.tickSeconds() == [0, 600, 630], "the table again once the stream gave up")
        await fixture.scheduler.appStateChanged(.foreground(false))
        #expect(await fixture.scheduler.plan(for: "a")?.schedule == .onRequest)
        await fixture.scheduler.shutdown()
    }
}
