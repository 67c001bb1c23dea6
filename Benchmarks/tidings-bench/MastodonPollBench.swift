import Foundation
import TidingsCore
import TidingsMastodon
import TidingsNet
import TidingsSandbox
import TidingsSandboxKit

/// M1 of issue 11: the polling scheduler's requests over a simulated day, against a naive poller.
///
/// 10 accounts on 3 in-process sandbox hosts (5 on `big.example`, 3 on `mid.example`, 2 on
/// `small.example`, whose limit is 25 requests per 5 minutes instead of Mastodon's 300), 24 hours on a
/// `TestClock`, 429s injected with the sandbox's faults (with and without `Retry-After`) besides the
/// small host's own, and a day of app states: background at night, two short foreground visits, an
/// evening in the foreground switching accounts, Low Power for an hour, an hour on cellular with
/// "Wi-Fi only". Ours is `MastodonPollScheduler` with one shared `RateBudget`, a budget gate per account
/// and the background refresh when the app is in the background; the baseline polls the unread count,
/// Home and notifications of every account every 30 s, whatever happens. Both send through
/// `MastodonStorelessPollTarget` (API client only, no store). Request counts on a virtual clock: no
/// wall-clock time enters the figures.
enum MastodonPollBench {
    static let day: Int64 = 24 * 3600
    static let hosts: [(name: String, accounts: Int, limit: Int)] = [
        ("big.example", 5, 300), ("mid.example", 3, 300), ("small.example", 2, 25),
    ]

    struct Request: Sendable {
        var second: Double
        var host: String
        var account: String
        var status: Int
        var retryAfter: Int?
    }

    /// Records what every sandbox answered.
    final class Recorder: Sendable {
        private let state = LockedState([Request]())
        var requests: [Request] { state.withLock { $0 } }
        func append(_ request: Request) { state.withLock { $0.append(request) } }
    }

    struct RecordingTransport: MastodonTransport {
        let inner: MastodonSandboxTransport
        let host: String
        let clock: TestClock
        let recorder: Recorder

        func response(for request: HTTPRequest) async throws -> HTTPResponse {
            let second = Double(clock.now.offset.components.seconds)
            let response = try await inner.response(for: request)
            recorder.append(
                Request(
                    second: second, host: host, account: request.rateLimitAccount ?? "", status: response.status,
                    retryAfter: response.headers.values(for: "Retry-After").first.flatMap { Int($0) }))
            return response
        }
    }

    /// Three sandboxes, their fault switches and one client per account, on one virtual clock.
    struct World {
        static let epoch = Date(timeIntervalSince1970: 1_760_000_000)
        let clock: TestClock
        let recorder = Recorder()
        var faults: [String: SandboxFaultSwitch] = [:]
        var servers: [String: MastodonSandboxServer] = [:]
        var authors: [String: String] = [:]
        var clients: [(host: String, key: String, client: MastodonAPIClient)] = []

        static func wallClock(_ clock: TestClock) -> @Sendable () -> Date {
            { Self.epoch.addingTimeInterval(Double(clock.now.offset.components.seconds)) }
        }

        init(clock: TestClock, budget: RateBudget?) async {
            self.clock = clock
            let now = Self.wallClock(clock)
            for host in MastodonPollBench.hosts {
                var variant = MastodonSandboxVariant.mastodon
                variant.requestsPerWindow = host.limit
                let server = MastodonSandboxServer(variant: variant, now: now)
                let switches = SandboxFaultSwitch()
                let transport = RecordingTransport(
                    inner: MastodonSandboxTransport(server: server.httpServer(faults: switches, clock: clock)),
                    host: host.name, clock: clock, recorder: recorder)
                let author = await server.addAccount(username: "author", token: "author-token")
                for index in 0..<host.accounts {
                    let name = "u\(clients.count)"
                    let id = await server.addAccount(username: name, token: "\(name)-token")
                    await server.follow(id, author)
                    let key = "\(name)@\(host.name)"
                    let client = MastodonAPIClient(
                        server: URL(string: "https://\(host.name)")!, accountKey: key,
                        authorization: MastodonAuthorization(token: "\(name)-token"), transport: transport,
                        budget: budget, now: now)
                    clients.append((host.name, key, client))
                    _ = index
                }
                servers[host.name] = server
                authors[host.name] = author
                faults[host.name] = switches
            }
        }

        /// The day's injected faults, at their second.
        func injectFaults(at second: Int64) {
            switch second {
            case 9 * 3600: faults["big.example"]?.add(.tooManyRequests(retryAfterSeconds: 600), times: 3)
            case 13 * 3600: faults["mid.example"]?.add(.tooManyRequests(retryAfterSeconds: nil), times: 2)
            case 19 * 3600 + 1800:
                faults["big.example"]?.add(
                    .tooManyRequests(retryAfterSeconds: 120), on: .path("/api/v2/notifications/unread_count"),
                    times: 2)
            case 20 * 3600 + 600: faults["small.example"]?.add(.status(503), times: 4)
            default: break
            }
        }

        /// Posts by each host's author every 10 minutes, so Home has something new.
        func post(at second: Int64) async {
            guard second % 600 == 0 else { return }
            for (host, server) in servers {
                if let author = authors[host] { _ = await server.post(as: author, "post at \(second)") }
            }
        }
    }

    /// The seconds at which something happens: faults, posts, app events, background refreshes.
    static func eventSeconds() -> [Int64] {
        var seconds = Set<Int64>()
        for faultSecond: Int64 in [9 * 3600, 13 * 3600, 19 * 3600 + 1800, 20 * 3600 + 600] {
            seconds.insert(faultSecond)
        }
        for second in stride(from: Int64(600), to: day, by: 600) { seconds.insert(second) }
        for (second, _) in appSchedule() { seconds.insert(second) }
        return seconds.sorted()
    }

    /// The day's app states.
    static func appSchedule() -> [(Int64, [MastodonAppEvent])] {
        let wifiOnly = MastodonPollSettings(wifiOnly: true)
        var events: [(Int64, [MastodonAppEvent])] = [
            (0, [.foreground(false)]),
            (7 * 3600, [.activeAccount("u0@big.example"), .visibleTimeline("home"), .foreground(true)]),
            (7 * 3600 + 1800, [.foreground(false)]),
            (12 * 3600, [.activeAccount("u5@mid.example"), .visibleTimeline("home"), .foreground(true)]),
            (12 * 3600 + 1200, [.foreground(false)]),
            (18 * 3600, [.activeAccount("u0@big.example"), .visibleTimeline("home"), .foreground(true)]),
            (19 * 3600, [.activeAccount("u5@mid.example")]),
            (20 * 3600, [.activeAccount("u8@small.example"), .lowPower(true)]),
            (
                21 * 3600,
                [.activeAccount("u1@big.example"), .lowPower(false), .settings(wifiOnly), .networkPath(.cellular)]
            ),
            (22 * 3600, [.foreground(false), .networkPath(.wifi), .settings(MastodonPollSettings())]),
        ]
        // Interactions: every minute of the morning visit, every 3 minutes of the evening.
        for second in stride(from: Int64(7 * 3600 + 60), to: 7 * 3600 + 1800, by: 60) {
            events.append((second, [.interaction]))
        }
        for second in stride(from: Int64(18 * 3600 + 180), to: 22 * 3600, by: 180) {
            events.append((second, [.interaction]))
        }
        return events.sorted { $0.0 < $1.0 }
    }

    // MARK: Ours

    /// The day through `MastodonPollScheduler`; the requests every sandbox answered.
    static func runScheduler() async throws -> [Request] {
        let clock = TestClock()
        let random = SeededRandom(seed: 11)
        let budget = RateBudget(clock: clock, wallClock: World.wallClock(clock), random: { random.next() })
        let world = await World(clock: clock, budget: budget)
        let scheduler = MastodonPollScheduler(clock: clock, random: { random.next() })
        var loops: [PollLoop] = []
        let schedule = appSchedule()
        var nextEvent = 0
        var nextBackgroundRefresh: Int64? = nil
        var foreground = true
        while nextEvent < schedule.count, schedule[nextEvent].0 <= 0 {
            for event in schedule[nextEvent].1 {
                if case .foreground(let isForeground) = event { foreground = isForeground }
                await scheduler.appStateChanged(event)
            }
            nextEvent += 1
        }
        // Accounts join one second apart, so no two loops share a deadline and the day replays alike.
        for (index, account) in world.clients.enumerated() {
            await PollLoopDriver.run(loops, clock: clock, until: VirtualInstant(offset: .seconds(index)))
            let gate = PollBudgetGate(budget: budget, host: account.host, account: account.key)
            let target = MastodonStorelessPollTarget(client: account.client)
            await scheduler.addAccount(MastodonPollAccount(key: account.key, target: target, gate: gate))
            loops.append(await scheduler.pollLoop(for: account.key)!)
        }
        var moments = Set(eventSeconds())
        for second in stride(from: Int64(0), to: day, by: 900) { moments.insert(second) }
        for second in moments.sorted() where second >= 10 {
            await PollLoopDriver.run(loops, clock: clock, until: VirtualInstant(offset: .seconds(second)))
            world.injectFaults(at: second)
            await world.post(at: second)
            while nextEvent < schedule.count, schedule[nextEvent].0 <= second {
                for event in schedule[nextEvent].1 {
                    if case .foreground(let isForeground) = event { foreground = isForeground }
                    await scheduler.appStateChanged(event)
                    // What an event makes due runs before the next event, the same way every run.
                    await PollLoopDriver.settle(loops, clock: clock)
                }
                nextEvent += 1
            }
            if foreground {
                nextBackgroundRefresh = nil
            } else if nextBackgroundRefresh == nil || second >= nextBackgroundRefresh! {
                let report = await backgroundRefresh(scheduler, loops: loops, clock: clock)
                nextBackgroundRefresh = second + report.nextRefreshIn.components.seconds
            }
        }
        await PollLoopDriver.run(loops, clock: clock, until: VirtualInstant(offset: .seconds(day)))
        await scheduler.shutdown()
        return world.recorder.requests
    }

    /// Runs one background refresh, moving the clock only if a request waits on it.
    static func backgroundRefresh(
        _ scheduler: MastodonPollScheduler, loops: [PollLoop], clock: TestClock
    ) async -> MastodonBackgroundRefreshReport {
        let run = Task { await scheduler.backgroundRefresh() }
        let done = DoneFlag()
        let watcher = Task {
            _ = await run.value
            done.set()
        }
        while !done.isSet {
            // Its budget's timer is one sleeper beside the loops'; more means a request waits on the clock
            // (its rate budget): only then does time move.
            if let expected = await PollLoopDriver.sleepers(of: loops), clock.pendingSleepers > expected + 1,
                !done.isSet
            {
                await clock.run(maxSteps: 1)
            } else {
                await Task.yield()
            }
        }
        await watcher.value
        return await run.value
    }

    // MARK: The baseline

    /// The day with a fixed 30-second poller per account that ignores every answer.
    static func runNaive() async throws -> [Request] {
        let clock = TestClock()
        let world = await World(clock: clock, budget: nil)
        var tasks: [Task<Void, Never>] = []
        for (index, account) in world.clients.enumerated() {
            let target = MastodonStorelessPollTarget(client: account.client)
            tasks.append(
                Task {
                    var next = Int64(index)
                    while !Task.isCancelled {
                        do { try await clock.sleep(until: VirtualInstant(offset: .seconds(next))) } catch { return }
                        _ = try? await target.pollUnreadCount()
                        try? await target.pollTimeline(MastodonTimelineKey.homeTimeline)
                        try? await target.pollNotifications()
                        next += 30
                    }
                })
        }
        let moments = Set(eventSeconds())
        var second: Int64 = 0
        while second < day {
            // Every poller asleep: step to the next deadline (or the next moment something is injected).
            var yields = 0
            while clock.pendingSleepers < tasks.count, yields < 1_000_000 {
                yields += 1
                await Task.yield()
            }
            guard let deadline = clock.earliestPendingDeadline else { break }
            second = deadline.offset.components.seconds
            if let moment = moments.filter({ $0 <= second && $0 > clock.now.offset.components.seconds }).min() {
                // Injected before the clock reaches the moment, so a poller waking then meets it every run.
                world.injectFaults(at: moment)
                await world.post(at: moment)
                await clock.advance(to: VirtualInstant(offset: .seconds(moment)))
                continue
            }
            await clock.advance(to: deadline)
        }
        for task in tasks { task.cancel() }
        return world.recorder.requests.filter { $0.second < Double(day) }
    }

    // MARK: Measures

    /// The most requests in any 300-second window, per key.
    static func largestWindow(_ requests: [Request], by key: (Request) -> String) -> Int {
        var largest = 0
        for (_, group) in Dictionary(grouping: requests, by: key) {
            let seconds = group.map(\.second).sorted()
            var start = 0
            for end in seconds.indices {
                while seconds[end] - seconds[start] >= 300 { start += 1 }
                largest = max(largest, end - start + 1)
            }
        }
        return largest
    }

    /// Requests an account sent while a `Retry-After` it had received was still running.
    static func requestsBeforeRetryAfter(_ requests: [Request]) -> Int {
        var count = 0
        for (_, group) in Dictionary(grouping: requests, by: \.account) {
            let sorted = group.sorted { $0.second < $1.second }
            var heldUntil = -1.0
            for request in sorted {
                if request.second < heldUntil { count += 1 }
                if request.status == 429, let retryAfter = request.retryAfter {
                    heldUntil = max(heldUntil, request.second + Double(retryAfter))
                }
            }
        }
        return count
    }

    static func run(_ reporter: BenchReporter) async throws {
        let ours = try await runScheduler()
        let naive = try await runNaive()
        let accountHours = Double(hosts.map(\.accounts).reduce(0, +) * 24)
        let oursAccount = largestWindow(ours, by: \.account)
        let oursHost = largestWindow(ours, by: \.host)
        let oursEarly = requestsBeforeRetryAfter(ours)
        let naiveEarly = requestsBeforeRetryAfter(naive)
        let ours429 = ours.filter { $0.status == 429 }.count
        let naive429 = naive.filter { $0.status == 429 }.count
        reporter.report(
            BenchResult(
                id: "M1",
                name: "requests per account-hour, 10 accounts on 3 hosts, 24 simulated hours (baseline: every 30 s)",
                value: Double(ours.count) / accountHours, unit: "requests",
                baseline: Double(naive.count) / accountHours,
                note:
                    "\(ours.count) requests vs \(naive.count); 429s received: \(ours429) vs \(naive429); lower is better"
            ))
        reporter.report(
            BenchResult(
                id: "M1w", name: "most requests in any 5-minute window, per account / per host",
                value: Double(oursAccount), unit: "requests", baseline: Double(largestWindow(naive, by: \.account)),
                note: "per host: \(oursHost) vs \(largestWindow(naive, by: \.host)); limit 300"))
        reporter.report(
            BenchResult(
                id: "M1r", name: "requests sent before a Retry-After ended", value: Double(oursEarly), unit: "requests",
                baseline: Double(naiveEarly), note: "target: 0"))
        guard oursAccount <= 300, oursHost <= 300, oursEarly == 0 else {
            throw PollBudgetViolated(perAccount: oursAccount, perHost: oursHost, early: oursEarly)
        }
    }

    struct PollBudgetViolated: Error, CustomStringConvertible {
        var perAccount: Int
        var perHost: Int
        var early: Int
        var description: String {
            "M1: \(perAccount) requests in 5 minutes per account, \(perHost) per host, \(early) before Retry-After ended"
        }
    }
}

/// A thread-safe one-way flag.
final class DoneFlag: Sendable {
    private let state = LockedState(false)
    var isSet: Bool { state.withLock { $0 } }
    func set() { state.withLock { $0 = true } }
}

/// A deterministic source of numbers in `0..<1`.
final class SeededRandom: Sendable {
    private let state: LockedState<UInt64>
    init(seed: UInt64) { state = LockedState(seed) }
    func next() -> Double {
        state.withLock { state in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(state >> 11) / Double(1 << 53)
        }
    }
}
