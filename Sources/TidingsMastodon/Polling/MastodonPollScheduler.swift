import TidingsCore

/// `MastodonPollScheduler` decides when every signed-in account polls and what each tick asks, on
/// TidingsCore's `PollLoop` (one per account) with ``MastodonPollPolicy``; the accounts' sync engines
/// do the requests through ``MastodonPollTarget``.
///
/// Guarantees:
/// - The app tells it its state through one call, ``appStateChanged(_:)``; every account's schedule is
///   re-evaluated at once, and idleness (2 and 10 minutes without interaction) as time passes.
/// - A tick makes 3 calls at most (one request each in the common case; the timeline and notifications polls
///   page upward while the server has newer ones, within the engine's bounds: see ``MastodonPollTarget``),
///   in seed 002's order: the unread count; the timeline of the plan
///   (the visible one; Home if visible in the last 5 minutes; none in the background or with
///   "Wi-Fi only" on a metered path); notifications only when the count changed (or is not known yet), the
///   engine reports a backlog, the count is at Mastodon's cap (100), where it cannot move, or they were last
///   polled 10 minutes ago or more (the count is a net number: an arrival and a removal cancel out).
///   A timeline the engine cannot fetch (``MastodonTimelineFailure``) fails only itself: the notifications
///   of the tick still go and polling keeps its cadence; a 5xx or a transport error of the timeline still
///   lets them go, then paces the next tick.
/// - A server without the unread count (Nextcloud Social: 404) fails no tick: the notifications are polled in
///   its place, and once it is known missing (`MastodonUnreadCountSupport`) it is not asked again until the
///   account's capabilities change; the background refresh then polls notifications only.
/// - Beside an open stream the account polls on the safety net, except while its timeline poll reports a
///   backlog (``MastodonPollTarget/hasTimelineBacklog(_:)``): then, stream or not, on the table's interval for
///   an interacting reader (30 s on Normal, doubled in Low Power; none on Manual) until caught up.
/// - Per account: backoff, `Retry-After`, the halved frequency, the rate budget's reserve, stopping on
///   needs-reauthentication (resumed when its ``MastodonAuthorization`` signs in again) and offline
///   (resumed on the path update) are the `PollLoop`'s.
/// - A timeline that appears is refreshed once, joining a refresh of it already in flight (a tick's
///   or another appearance's), and never before a pending `Retry-After` ends.
/// - A push wake asks the account for one tick, whatever the preset (Manual included).
/// - ``backgroundRefresh(budget:)`` polls notifications and the unread count of every account (a
///   pushed one only if its last poll is over 10 minutes old), never timelines, and cancels what is
///   still in flight when its budget (25 s) ends; ``backgroundRefreshHint`` says when to schedule the
///   next (the configured interval, never under 15 minutes).
///
/// Call ``shutdown()`` to stop every loop (the loops' tasks hold no strong reference to the scheduler).
public actor MastodonPollScheduler {
    private struct AccountState {
        var account: MastodonPollAccount
        let loop: PollLoop
        let task: Task<Void, Never>
        var watcher: Task<Void, Never>?
        var lastUnread: Int?
        var unreadCount = MastodonUnreadCountSupport()
        var lastPollAt: Duration?
        var notificationsPolledAt: Duration?
        var homeVisibleAt: Duration?
        var streamOpen: Bool?
        var timelineFailure: MastodonTimelineFailure?
        /// The last tick's timeline poll left newer statuses on the server: poll on the table, not the safety net.
        var timelineBacklog = false
        /// Whether the tick's one notifications page left newer ones on the server (the tick's request bound).
        var notificationBacklog = false
        /// Whether either poll left something on the server: the next tick comes at a reader's pace.
        var backlog: Bool { timelineBacklog || notificationBacklog }
    }

    private let clock: any Clock<Duration>
    private let timeline: Timeline
    private let configuration: PollLoopConfiguration
    private let random: @Sendable () -> Double
    private let refreshes = SingleFlight<String, Bool>()
    private var accounts: [String: AccountState] = [:]
    private var settings: MastodonPollSettings
    private var foreground = true
    private var activeAccount: String?
    private var visibleTimeline: String?
    private var lastInteraction: Duration
    private var lowPower = false
    private var path = MastodonNetworkPath.wifi

    /// A scheduler with no account, in the foreground on an unmetered path, interacting now.
    ///
    /// - Parameters:
    ///   - clock: Every interval and wait goes through it (`TestClock` in tests).
    ///   - settings: The user's preset and "Wi-Fi only".
    ///   - configuration: The loops' backoff and penalty.
    ///   - random: Backoff jitter in `0..<1`.
    public init(
        clock: any Clock<Duration>, settings: MastodonPollSettings = MastodonPollSettings(),
        configuration: PollLoopConfiguration = PollLoopConfiguration(),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.clock = clock
        self.timeline = Timeline(clock)
        self.settings = settings
        self.configuration = configuration
        self.random = random
        self.lastInteraction = .zero
    }

    // MARK: - Accounts

    /// Starts polling an account (replacing one with the same key). Its first tick comes at once when
    /// its schedule has a timer.
    public func addAccount(_ account: MastodonPollAccount) async {
        removeAccount(account.key)
        let key = account.key
        let loop = PollLoop(
            clock: clock, configuration: configuration, gate: account.gate, random: random,
            schedule: { [weak self] in await self?.plan(for: key)?.schedule ?? .onRequest },
            tick: { [weak self] in await self?.tick(key) ?? .success })
        let task = Task { await loop.run() }
        var state = AccountState(account: account, loop: loop, task: task)
        if let authorization = account.authorization {
            let changes = authorization.changes()
            state.watcher = Task {
                for await _ in changes where authorization.authState == .signedIn {
                    await loop.resume()
                }
            }
        }
        accounts[key] = state
        await loop.setNetworkSatisfied(path.satisfied)
    }

    /// Stops polling an account.
    public func removeAccount(_ key: String) {
        guard let state = accounts.removeValue(forKey: key) else { return }
        state.task.cancel()
        state.watcher?.cancel()
    }

    /// New capabilities or push registration of an account (its tiers are chosen again).
    public func updateAccount(
        _ key: String, capabilities: MastodonCapabilities?, push: MastodonPushRegistration
    ) async {
        // Different capabilities may mean a different server (an upgrade): ask for the unread count again.
        if accounts[key]?.account.capabilities != capabilities { accounts[key]?.unreadCount = .init() }
        accounts[key]?.account.capabilities = capabilities
        accounts[key]?.account.push = push
        await rescheduleAll()
    }

    /// The engine tells whether the account's user stream is actually open; a stream that gave up
    /// (`false`) puts the account back on the adaptive table instead of the safety net.
    public func setStreamOpen(_ open: Bool, account key: String) async {
        accounts[key]?.streamOpen = open
        await rescheduleAll()
    }

    /// Restarts an account stopped by a refusal, once the app signed it in again (done on its own
    /// when the account came with its ``MastodonAuthorization``).
    public func resumeAccount(_ key: String) async {
        await accounts[key]?.loop.resume()
    }

    /// Stops every account's loop.
    public func shutdown() {
        for key in Array(accounts.keys) { removeAccount(key) }
    }

    /// An account's loop (its state and events), for diagnostics and tests.
    public func pollLoop(for key: String) -> PollLoop? { accounts[key]?.loop }

    // MARK: - The app's state

    /// The one way the app tells polling what it is doing.
    public func appStateChanged(_ event: MastodonAppEvent) async {
        let now = timeline.elapsed
        switch event {
        case .foreground(let isForeground):
            noteHomeLeaving(now)
            foreground = isForeground
            if isForeground { lastInteraction = now }
        case .activeAccount(let key):
            noteHomeLeaving(now)
            activeAccount = key
        case .visibleTimeline(let name):
            noteHomeLeaving(now)
            visibleTimeline = name
        case .interaction:
            lastInteraction = now
        case .lowPower(let on):
            lowPower = on
        case .networkPath(let newPath):
            path = newPath
            for state in accounts.values { await state.loop.setNetworkSatisfied(newPath.satisfied) }
        case .settings(let newSettings):
            settings = newSettings
        }
        await rescheduleAll()
    }

    /// A push arrived for the account: one tick, whatever the preset.
    public func pushArrived(account key: String) async {
        await accounts[key]?.loop.requestTick()
    }

    /// A push announced new notifications without naming them (a Nextcloud Social push): polls the account's
    /// notifications now, joining a poll of them in flight (a tick's or another push's), after a pending
    /// `Retry-After` and, while the server's reserve is reached (the account's gate), after its
    /// `X-RateLimit-Reset`; nothing offline or for an unknown account. The request draws on the account's rate
    /// budget like every other.
    ///
    /// - Returns: Whether a poll ran (joined or started).
    /// - Throws: The poll's error (a ``MastodonError``), or `CancellationError`.
    @discardableResult
    public func notificationsRequested(account key: String) async throws -> Bool {
        guard let state = accounts[key], path.satisfied else { return false }
        try await waitForBudget(state)
        return try await pollNotifications(key: key, target: state.account.target)
    }

    /// A timeline appeared on screen: one refresh of it, joining one in flight; waits for a pending
    /// `Retry-After` and, at the server's reserve (the account's gate), for its `X-RateLimit-Reset` first;
    /// nothing offline or for an unknown account.
    ///
    /// - Returns: Whether a refresh ran (joined or started).
    /// - Throws: The refresh's error (a ``MastodonError``), or `CancellationError`.
    @discardableResult
    public func timelineAppeared(_ name: String, account key: String) async throws -> Bool {
        guard let state = accounts[key], path.satisfied else { return false }
        try await waitForBudget(state)
        return try await refresh(name, key: key, target: state.account.target)
    }

    /// Sleeps out the loop's hold (`Retry-After`, backoff), then the gate's pause: requests made beside the
    /// ticks leave the server's reserve to the person as the ticks do.
    private func waitForBudget(_ state: AccountState) async throws {
        let held = await state.loop.heldFor
        if held > .zero { try await timeline.sleep(for: held) }
        guard let gate = state.account.gate else { return }
        let pause = await gate.pause()
        if pause > .zero { try await timeline.sleep(for: pause) }
    }

    /// When the app should schedule its next background refresh from now: the configured interval,
    /// never under 15 minutes.
    public var backgroundRefreshHint: Duration {
        max(.seconds(900), settings.backgroundRefreshInterval ?? settings.preset.backgroundRefreshInterval)
    }

    /// The plan of an account now (`nil` for an unknown account).
    public func plan(for key: String) -> MastodonPollPlan? {
        guard let state = accounts[key] else { return nil }
        let now = timeline.elapsed
        let isActive = key == activeAccount
        let visible = foreground && isActive ? visibleTimeline : nil
        let homeRecently =
            visible == MastodonTimelineKey.homeTimeline
            || state.homeVisibleAt.map { now - $0 <= .seconds(300) } ?? false
        // Catching up a backlog goes at the pace of a reader at the screen, however long the app has been idle.
        let idleFor = state.backlog ? Duration.zero : now - lastInteraction
        let inputs = MastodonPollInputs(
            tiers: tiers(state, isActive: isActive), activeAccount: isActive,
            interaction: MastodonInteraction(idleFor: idleFor), lowPower: lowPower, path: path,
            settings: settings, visibleTimeline: visible, homeVisibleRecently: homeRecently)
        return MastodonPollPolicy.plan(inputs)
    }

    // MARK: - Ticks

    private func tick(_ key: String) async -> PollTickOutcome {
        guard let state = accounts[key], let plan = plan(for: key) else { return .success }
        let target = state.account.target
        do {
            let countAsked = accounts[key]?.unreadCount.missing == false
            let count = try await unreadCount(key, target: target)
            // A capped count may not move while more arrived than one poll read: the engine's backlog says so.
            // And at the cap (Mastodon counts at most 100) it cannot show a new notification at all.
            let backlog = await (target as? MastodonAccountEngine)?.hasNotificationBacklog ?? false
            // The count is a net number: one arriving while one about a deleted status goes leaves it as it was.
            let stale = accounts[key]?.notificationsPolledAt.map { timeline.elapsed - $0 >= Self.notificationsMaxAge }
            let capped = count.map { $0 >= Self.unreadCountCap } ?? false
            let notificationsDue =
                count == nil || accounts[key]?.lastUnread != count || backlog || capped || stale ?? true
            // At most `requestsPerTick` in all: the timeline pages with what the count and notifications leave,
            // notifications read one page after a timeline; the rest is the engine's backlog for the next tick.
            let left = Self.requestsPerTick - (countAsked ? 1 : 0)
            let timelinePages = max(1, left - (notificationsDue ? 1 : 0))
            // The timeline's failure is its own: notifications still go, and only a failure of the account or
            // the connection (rate limit, token, transport, 5xx) paces the next tick.
            var transient: (any Error)?
            if plan.timeline == nil { accounts[key]?.timelineBacklog = false }
            if let name = plan.timeline {
                // Every `await` result goes into a local before it is stored: `accounts[key]?.x = await …` reads
                // the whole account before suspending and writes it all back after, undoing what other calls
                // (a stream opening, new capabilities) stored meanwhile.
                do {
                    _ = try await MastodonTickPageBudget.$pages.withValue(timelinePages) {
                        try await refresh(name, key: key, target: target)
                    }
                    accounts[key]?.timelineFailure = nil
                    let timelineLeft = await target.hasTimelineBacklog(name)
                    accounts[key]?.timelineBacklog = timelineLeft
                } catch {
                    let timelineLeft = await target.hasTimelineBacklog(name)
                    accounts[key]?.timelineBacklog = timelineLeft
                    if let failure = MastodonTimelineFailure.timelineOnly(error) {
                        accounts[key]?.timelineFailure = MastodonTimelineFailure(timeline: name, error: failure)
                    } else if Self.endsTick(error) {
                        throw error
                    } else {
                        transient = error
                    }
                }
            }
            if notificationsDue {
                let pages = plan.timeline == nil ? left : max(1, left - timelinePages)
                _ = try await MastodonTickPageBudget.$pages.withValue(pages) {
                    try await pollNotifications(key: key, target: target)
                }
                let notificationsLeft = await (target as? MastodonAccountEngine)?.hasNotificationBacklog ?? false
                accounts[key]?.notificationBacklog = notificationsLeft
                accounts[key]?.notificationsPolledAt = timeline.elapsed
            }
            accounts[key]?.lastUnread = count
            accounts[key]?.lastPollAt = timeline.elapsed
            if let transient { return Self.outcome(of: transient) }
            return .success
        } catch {
            return Self.outcome(of: error)
        }
    }

    /// The account's unread count, or nil when its server has none (Nextcloud Social): then the tick polls
    /// notifications instead, every time, and no tick fails on the missing endpoint.
    private func unreadCount(_ key: String, target: any MastodonPollTarget) async throws -> Int? {
        guard accounts[key]?.unreadCount.missing == false else { return nil }
        do {
            let count = try await target.pollUnreadCount()
            accounts[key]?.unreadCount.answered()
            return count
        } catch  where MastodonUnreadCountSupport.isMissingAnswer(error) {
            let version1 = MastodonUnreadCountSupport.asksVersion1Only(accounts[key]?.account.capabilities)
            accounts[key]?.unreadCount.missed(version1Asked: version1)
            return nil
        }
    }

    private func refresh(_ name: String, key: String, target: any MastodonPollTarget) async throws -> Bool {
        try await refreshes.run(key: key + "\n" + name) {
            try await target.pollTimeline(name)
            return true
        }
    }

    /// One notifications poll per account at a time: a tick's and a push's join.
    private func pollNotifications(key: String, target: any MastodonPollTarget) async throws -> Bool {
        try await refreshes.run(key: key + Self.notificationsFlight) {
            try await target.pollNotifications()
            return true
        }
    }

    /// The most requests one tick makes for one account (seed 002 §3: the count, the timeline, notifications).
    static let requestsPerTick = 3

    /// The most Mastodon's unread count says (its default `limit`): at it, the count no longer moves when a
    /// notification arrives, so every tick polls notifications.
    static let unreadCountCap = 100

    /// How long a tick may leave notifications unpolled while the count does not move (10 minutes).
    static let notificationsMaxAge = Duration.seconds(600)

    /// The single-flight key suffix of notifications polls (a timeline's name never starts with a NUL).
    private static let notificationsFlight = "\n\u{0}notifications"

    /// How many callers share the account's notifications poll in flight (0: none runs), for tests.
    package func notificationPollCallers(account key: String) async -> Int {
        await refreshes.callerCount(key: key + Self.notificationsFlight)
    }

    /// How many callers share the refresh of a timeline in flight (0: none runs), for tests.
    func refreshCallers(account key: String, timeline name: String) async -> Int {
        await refreshes.callerCount(key: key + "\n" + name)
    }

    /// Whether a timeline's `error` stops the tick at once: a rate limit, a refused token or cancellation.
    static func endsTick(_ error: any Error) -> Bool {
        if error is CancellationError { return true }
        switch error {
        case MastodonError.rateLimited, MastodonError.unauthorized, MastodonError.needsReauthentication: return true
        default: return false
        }
    }

    /// Why the latest poll of the account's visible timeline failed while its tick went on (nil once a poll of
    /// it succeeded again).
    public func timelineFailure(account key: String) -> MastodonTimelineFailure? {
        accounts[key]?.timelineFailure
    }

    static func outcome(of error: any Error) -> PollTickOutcome {
        switch error {
        case MastodonError.rateLimited:
            let seconds = (error as? MastodonError)?.retryAfterSeconds
            return .rateLimited(retryAfter: seconds.map { Duration.seconds($0) })
        case MastodonError.unauthorized, MastodonError.needsReauthentication:
            return .needsReauthentication
        default:
            return .failed
        }
    }

    // MARK: - Background refresh

    /// The system's background refresh: notifications and the unread count of every account that
    /// needs it, concurrently, within `budget`; what is in flight when it ends is cancelled (the
    /// engine keeps what it stored). Never timelines.
    ///
    /// - Parameters:
    ///   - budget: The platform's window (25 s); everything, raising included, ends with it.
    ///   - raisers: For each account that has one, what raises its notifications: told
    ///     ``MastodonBackgroundRaiseStep/notificationsPolled`` as soon as its notifications are stored (before the
    ///     unread count is asked), then ``MastodonBackgroundRaiseStep/unreadCountRead`` (also when the server has
    ///     no count), each inside the budget, so a cut run has raised what it stored up to then.
    public func backgroundRefresh(
        budget: Duration = .seconds(25), raisers: [String: MastodonBackgroundRaiser] = [:]
    ) async -> MastodonBackgroundRefreshReport {
        var report = MastodonBackgroundRefreshReport()
        report.nextRefreshIn = backgroundRefreshHint
        let now = timeline.elapsed
        var jobs:
            [(key: String, target: any MastodonPollTarget, countMissing: Bool, raise: MastodonBackgroundRaiser?)] =
                []
        for key in accounts.keys.sorted() {
            guard let state = accounts[key] else { continue }
            let loopState = await state.loop.state
            let recentlyPolled = state.lastPollAt.map { now - $0 <= .seconds(600) } ?? false
            if !path.satisfied || state.account.authorization?.authState == .needsReauthentication
                || loopState == .waiting(until: nil, reason: .needsReauthentication)
                || (state.account.push == .active && recentlyPolled)
            {
                report.skipped.append(key)
            } else if await state.loop.heldFor > .zero {
                report.skipped.append(key)
            } else if let gate = state.account.gate, await gate.pause() > .zero {
                report.skipped.append(key)
            } else {
                jobs.append((key, state.account.target, state.unreadCount.missing, raisers[key]))
            }
        }
        guard !jobs.isEmpty else { return report }
        let timeline = timeline
        let results = await withTaskGroup(of: (String, BackgroundResult)?.self) { group in
            group.addTask {
                try? await timeline.sleep(for: budget)
                return nil
            }
            for job in jobs {
                group.addTask {
                    var notificationsPolled = false
                    do {
                        try await job.target.pollNotifications()
                        notificationsPolled = true
                        // Raised at once: a run the budget cuts while the count is asked has told the person.
                        await job.raise?(.notificationsPolled)
                        if job.countMissing {
                            await job.raise?(.unreadCountRead)
                            return (job.key, .polled(nil))
                        }
                        let count = try await job.target.pollUnreadCount()
                        await job.raise?(.unreadCountRead)
                        return (job.key, .polled(count))
                    } catch
                        where notificationsPolled && MastodonUnreadCountSupport.isMissingAnswer(error)
                        && !Task.isCancelled
                    {
                        // Notifications were polled; only the count is missing (Nextcloud Social).
                        await job.raise?(.unreadCountRead)
                        return (job.key, .countMissing)
                    } catch {
                        return (job.key, Task.isCancelled ? .cutShort : .failed)
                    }
                }
            }
            var results: [(String, BackgroundResult)] = []
            while let next = await group.next() {
                guard let next else {
                    group.cancelAll()
                    continue
                }
                results.append(next)
                if results.count == jobs.count { group.cancelAll() }
            }
            return results
        }
        let end = timeline.elapsed
        for (key, result) in results.sorted(by: { $0.0 < $1.0 }) {
            switch result {
            case .polled(let count):
                report.polled.append(key)
                accounts[key]?.lastUnread = count
                accounts[key]?.lastPollAt = end
            case .countMissing:
                report.polled.append(key)
                let version1 = MastodonUnreadCountSupport.asksVersion1Only(accounts[key]?.account.capabilities)
                accounts[key]?.unreadCount.missed(version1Asked: version1)
                accounts[key]?.lastPollAt = end
            case .failed: report.failed.append(key)
            case .cutShort: report.cutShort.append(key)
            }
        }
        return report
    }

    private enum BackgroundResult: Sendable {
        case polled(Int?)
        case countMissing
        case failed
        case cutShort
    }

    // MARK: - State

    private func tiers(_ state: AccountState, isActive: Bool) -> MastodonTiers {
        let auth = state.account.authorization?.authState ?? .signedIn
        var tiers: MastodonTiers
        if let capabilities = state.account.capabilities {
            let app = MastodonAppState(
                foreground: foreground, online: path.satisfied, isActiveAccount: isActive,
                notificationsOnly: settings.wifiOnly && path.isMetered)
            tiers = MastodonTierPolicy.tiers(
                capabilities: capabilities, app: app, push: state.account.push, auth: auth)
        } else {
            let polling: MastodonTiers.Polling =
                auth != .signedIn || !path.satisfied ? .stopped : foreground ? .adaptive : .backgroundRefresh
            tiers = MastodonTiers(push: state.account.push == .active, streaming: false, polling: polling)
        }
        if case .safetyNet = tiers.polling, state.streamOpen == false {
            tiers.streaming = false
            tiers.polling = .adaptive
        } else if case .safetyNet = tiers.polling, state.backlog {
            // The stream brings only what is posted while it is open: what a burst or a stretch offline left
            // above the cache is polled on the table until the timeline is caught up.
            tiers.polling = .adaptive
        }
        return tiers
    }

    /// Home stops being visible for the active account: remember when, for "visible in the last 5 minutes".
    private func noteHomeLeaving(_ now: Duration) {
        guard foreground, visibleTimeline == MastodonTimelineKey.homeTimeline, let key = activeAccount else { return }
        accounts[key]?.homeVisibleAt = now
    }

    private func rescheduleAll() async {
        for loop in accounts.values.map(\.loop) { await loop.reschedule() }
    }
}
