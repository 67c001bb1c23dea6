import Foundation
import TidingsCore

/// `MastodonSync` is the one object an app talks to for its Mastodon accounts: it owns each signed-in
/// account's ``MastodonAccountEngine``, one ``MastodonPollScheduler`` driving them, and the user stream of the
/// active account.
///
/// Guarantees:
/// - Each account's capabilities are fetched when it is added and on ``refreshCapabilities(account:)``; the
///   engine and the scheduler get them, so a v1-only server is not asked v2 first and the tiers are chosen
///   again whenever they change. An account added while its server could not be reached (an offline launch)
///   gets them, its filters and the server's markers on the next foreground or satisfied network path, and
///   its stream when the tiers then allow one.
/// - The user stream runs for the active account only, while the app is in the foreground and online, the
///   server offers streaming and the account is signed in (``MastodonTierPolicy``); it closes at once when the
///   app goes to the background, goes offline or another account becomes active. Its state is reported to
///   the scheduler (``MastodonPollScheduler/setStreamOpen(_:account:)``): a stream that is not open puts the
///   account back on the adaptive table, an open one slows polling to the safety net.
/// - A stream that gave up is started again only when the app returns to the foreground, the network returns or
///   the active account changes.
/// - Each account's filters are fetched when it is added or signed in again and on the stream's
///   `filters_changed` (``MastodonAccountEngine/filters()``, ``MastodonEngineChange/filtersChanged``).
/// - Each account's outbox is replayed (``MastodonAccountEngine/replayOutbox()``) when it is added (launch)
///   while online, when the network path becomes satisfied again and on foreground; a failure keeps the
///   action pending; while one stays pending online, it is sent again after 30 s, doubling up to 15 minutes
///   (``MastodonAccountEngine/maximumActionAttempts`` transient failures revert it). Its markers are read (``MastodonAccountEngine/syncMarkers()``) when it is added and on
///   foreground, and posted at once (``MastodonAccountEngine/enterBackground()``) when the app goes to the
///   background; no marker is posted while the path is unsatisfied (one that came due goes out once when it
///   returns). What app-state changes start runs on the account's one background task, so
///   ``appStateChanged(_:)`` returns promptly; ``housekeepingSettled()`` waits for it.
/// - ``changes()`` merges every engine's changes and every stream's states into one bounded stream per subscriber.
/// - Every account added is recorded in its store's durable signed-in accounts (no token), which migrations
///   and recovery keep; ``restoreAccounts(from:pageLimit:client:)`` signs them in again after a relaunch, and
///   ``signOut(account:)`` forgets the record.
/// - ``signOut(account:)`` stops the account's polling and stream; a refused token (needs reauthentication)
///   stops them until ``signIn(account:token:)``.
/// - Requests are paced by default (``MastodonRateLimiting``): per account and endpoint family from the
///   server's headers, and per host across every account (one politeness bucket), polling held by a gate over
///   the same budget.
/// - ``maintenance()`` sweeps each store once per call within ``MastodonMaintenancePolicy/retention``.
/// - Cached statuses are re-checked for deletions (what was deleted while offline) at the end of the
///   foreground's and the network return's housekeeping, in ``maintenance()`` and in every
///   ``syncNow(account:progress:)`` (an explicit sync); automatically at most once per
///   ``MastodonMaintenancePolicy/recheckInterval`` per account, through the account's rate budget; every run
///   (housekeeping and maintenance) skips it while the server's reserve is reached (the polling gate).
public actor MastodonSync {
    private struct Account {
        let engine: MastodonAccountEngine
        var capabilities: MastodonCapabilities?
        var push: MastodonPushRegistration
        var stream: MastodonUserStream?
        var onNotification: (@Sendable (MastodonNotification) async -> Void)?
        var tasks: [Task<Void, Never>] = []
        var lastRecheck: Duration?
        /// The gate the account's polling consults; automatic work beside the ticks consults it too.
        var gate: PollBudgetGate?
        /// The account's housekeeping jobs, run one after another by its one worker task.
        var housekeeping: AsyncStream<Housekeeping>.Continuation?
        var outboxRetry: Task<Void, Never>?
    }

    /// Work an app-state change starts for an account, off the caller's path (one worker task per account).
    enum Housekeeping: Sendable {
        /// Foreground: what the launch missed, the server's markers read, then the outbox replayed.
        case foreground
        /// Background: the pending markers posted at once (the debounce would not outlive suspension).
        case background
        /// The network path returned: what the launch missed (capabilities, filters, the server's markers), a
        /// marker post that waited for it, then the outbox replayed.
        case networkReturn
    }

    /// The scheduler polling every account (for diagnostics, plans and tests).
    public nonisolated let scheduler: MastodonPollScheduler
    private let clock: any Clock<Duration>
    private let timeline: Timeline
    private let streamConnector: MastodonStreamConnector?
    private let maintenancePolicy: MastodonMaintenancePolicy
    private let logger: TidingsLogger
    /// The budget every account's requests and polling go through (nil with ``MastodonRateLimiting/disabled``):
    /// one politeness bucket per host shared by every account, a scope per account and endpoint family.
    public nonisolated let rateBudget: RateBudget?
    private let broadcaster = ChangeBroadcaster<MastodonSyncChange> { .missed($0) }
    private var accounts: [String: Account] = [:]
    private var foreground = true
    private var online = true
    private var activeAccount: String?
    private var queuedHousekeeping: [String: Int] = [:]
    private var settleWaiters: [CheckedContinuation<Void, Never>] = []

    /// A sync object with no account, in the foreground and online.
    ///
    /// - Parameters:
    ///   - clock: Polling, streaming backoff and maintenance cadence run on it (`TestClock` in tests).
    ///   - settings: The user's polling preset and "Wi-Fi only".
    ///   - configuration: The polling loops' backoff and penalty.
    ///   - streamConnector: Opens user streams (TidingsNet's WebSocket when nil).
    ///   - maintenance: The retention limits and the deletion re-check cadence.
    ///   - rateLimiting: How requests are paced: on by default (``MastodonRateLimiting/automatic``);
    ///     ``MastodonRateLimiting/disabled`` only for tests that need it.
    ///   - now: The current date, for the budget's `Retry-After` dates and `X-RateLimit-Reset` timestamps.
    ///   - random: Polling and budget jitter in `0..<1`.
    ///   - logger: Where the streams report what they refuse (a streaming URL the token may not go to).
    public init(
        clock: any Clock<Duration> = ContinuousClock(), settings: MastodonPollSettings = MastodonPollSettings(),
        configuration: PollLoopConfiguration = PollLoopConfiguration(),
        streamConnector: MastodonStreamConnector? = nil,
        maintenance: MastodonMaintenancePolicy = MastodonMaintenancePolicy(),
        rateLimiting: MastodonRateLimiting = .automatic, now: @escaping @Sendable () -> Date = { Date() },
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        logger: TidingsLogger = .disabled
    ) {
        self.logger = logger
        switch rateLimiting.mode {
        case .own(let limits):
            rateBudget = RateBudget(configuration: limits, clock: clock, wallClock: now, random: random)
        case .given(let budget): rateBudget = budget
        case .disabled: rateBudget = nil
        }
        self.clock = clock
        self.timeline = Timeline(clock)
        self.scheduler = MastodonPollScheduler(
            clock: clock, settings: settings, configuration: configuration, random: random)
        self.streamConnector = streamConnector
        self.maintenancePolicy = maintenance
    }

    /// A fresh stream of every account's changes for one subscriber (bounded; a lag marker when it falls behind).
    public nonisolated func changes() -> ChangeSubscription<MastodonSyncChange> { broadcaster.subscribe() }

    /// The keys of the signed-in accounts.
    public var accountKeys: [String] { accounts.keys.sorted() }

    /// The engine of an account, for reading its timelines, markers and actions.
    public func engine(for account: String) -> MastodonAccountEngine? { accounts[account]?.engine }

    /// What an account's user stream is doing (`.stopped` when it has none).
    public func streamState(for account: String) async -> MastodonStreamState {
        await accounts[account]?.stream?.state ?? .stopped
    }

    // MARK: Accounts

    /// Signs an account in: its engine over `client` and `store`, its capabilities fetched (an unreachable
    /// server leaves them unknown until ``refreshCapabilities(account:)``), its polling started and, when it is
    /// the active account, its stream. An account with the same key is replaced.
    ///
    /// Unless rate limiting is ``MastodonRateLimiting/disabled``, a client without a budget of its own gets the
    /// sync object's (``rateBudget``), and polling a gate over the client's budget, so the account's requests
    /// share its host's politeness bucket with every other account there.
    ///
    /// - Parameters:
    ///   - client: The account's API client (its key is the account's key).
    ///   - store: The store (opened with ``MastodonTimelineSchema/schema``); accounts may share one.
    ///   - push: Whether a push registration is live for it.
    ///   - gate: The gate the scheduler consults before each tick; by default one over the client's budget
    ///     (the server's `Retry-After`, and 10 requests of `X-RateLimit-Remaining` kept for the person).
    ///   - pageLimit: The `limit` of timeline and notification pages.
    /// - Returns: The account's engine.
    @discardableResult
    public func addAccount(
        client: MastodonAPIClient, store: MastodonTimelineStore, push: MastodonPushRegistration = .none,
        gate: PollBudgetGate? = nil, pageLimit: Int = 40
    ) async -> MastodonAccountEngine {
        let key = client.accountKey
        let client = client.rateBudget == nil && rateBudget != nil ? client.withRateBudget(rateBudget) : client
        let gate =
            gate
            ?? client.rateBudget.flatMap { budget in
                client.server.host.map { PollBudgetGate(budget: budget, host: $0, account: key) }
            }
        await signOut(account: key, announce: false)
        // Recorded first, so a relaunch knows the account even when nothing else of it was stored; a store that
        // cannot be written leaves it signed in for this session only (the engine's writes fail the same way).
        let server = client.server
        _ = try? await store.database.write { db in try store.saveAccount(key: key, server: server, in: db) }
        let engine = MastodonAccountEngine(client: client, store: store, clock: clock, pageLimit: pageLimit)
        let capabilities = try? await engine.capabilities()
        // Filters at sign-in and launch; a server without them (Nextcloud Social) or offline leaves them nil.
        if capabilities != nil { _ = try? await engine.refreshFilters() }
        var account = Account(engine: engine, capabilities: capabilities, push: push, gate: gate)
        let changes = engine.changes()
        account.tasks.append(
            Task { [weak self] in
                for await change in changes {
                    await self?.publish(.engine(account: key, change))
                    if case .actionPending = change { await self?.retryOutboxLater(key) }
                }
            })
        let authorization = client.authorization
        let authChanges = authorization.changes()
        account.tasks.append(
            Task { [weak self] in
                for await _ in authChanges { await self?.reevaluateStreams(resume: true) }
            })
        let (jobs, queue) = AsyncStream<Housekeeping>.makeStream()
        account.housekeeping = queue
        account.tasks.append(
            Task { [weak self] in
                for await job in jobs {
                    await self?.fetchWhatLaunchMissed(key, engine: engine, job: job)
                    await Self.run(job, on: engine)
                    if job != .background { await self?.recheckIfDue(key, engine: engine) }
                    await self?.housekeepingDone(key)
                }
            })
        accounts[key] = account
        if let capabilities { broadcaster.publish(.capabilities(account: key, capabilities)) }
        await scheduler.addAccount(
            MastodonPollAccount(
                key: key, target: engine, capabilities: capabilities, push: push, authorization: authorization,
                gate: gate))
        await engine.setNetworkSatisfied(online)
        await reevaluateStreams(resume: false)
        // Launch and sign-in: the server's read positions, then what was left pending before the restart.
        if capabilities != nil { _ = try? await engine.syncMarkers() }
        if online { await engine.replayOutbox() }
        await retryOutboxLater(key)
        return engine
    }

    /// Keeps sending an account's outbox while actions stay pending: a send that failed for a transient
    /// reason (a 5xx, a drop, a 429) while the app stays online and in the foreground has no other event that
    /// would send it again. One retry task per account; it ends when the outbox is empty or the account goes.
    private func retryOutboxLater(_ key: String) async {
        guard let account = accounts[key], account.outboxRetry == nil,
            (try? await account.engine.pendingActions().isEmpty) == false
        else { return }
        let timeline = timeline
        accounts[key]?.outboxRetry = Task { [weak self] in
            var failures = 1
            while !Task.isCancelled {
                let delay = MastodonAccountEngine.outboxRetryDelay(afterFailures: failures)
                do { try await timeline.sleep(for: delay) } catch { return }
                guard let self, await self.retryOutbox(key) else { return }
                failures += 1
            }
        }
    }

    /// One retry of an account's outbox (not offline or signed out); whether actions are still pending.
    private func retryOutbox(_ key: String) async -> Bool {
        guard let engine = accounts[key]?.engine else { return false }
        if online, engine.client.authorization.authState == .signedIn { await engine.replayOutbox() }
        let pending = (try? await engine.pendingActions().isEmpty) == false
        if !pending { accounts[key]?.outboxRetry = nil }
        return pending
    }

    /// Signs an account out: its polling and stream stop and it is forgotten — also by the store's signed-in
    /// accounts, so a relaunch does not sign it in again (its cached rows and unsent actions stay in the store).
    public func signOut(account key: String) async {
        let store = accounts[key]?.engine.store
        await signOut(account: key, announce: true)
        _ = try? await store?.database.write { db in try store?.removeAccount(key: key, in: db) }
    }

    /// Signs in again every account `store` recorded as signed in (a relaunch): `client` gives each one's API
    /// client — with the token the app keeps for its key — or nil to leave it out of this session (it stays
    /// recorded). The accounts are added in the order they were first signed in, as ``addAccount(client:store:push:gate:pageLimit:)``
    /// adds them; a client whose key differs from the stored one is skipped.
    ///
    /// - Returns: The engines of the accounts signed in again.
    /// - Throws: A store error reading the accounts (nothing was added then).
    @discardableResult
    public func restoreAccounts(
        from store: MastodonTimelineStore, pageLimit: Int = 40,
        client: (MastodonStoredAccount) async -> MastodonAPIClient?
    ) async throws -> [MastodonAccountEngine] {
        var engines: [MastodonAccountEngine] = []
        for stored in try await store.storedAccounts() {
            guard let client = await client(stored), client.accountKey == stored.key else { continue }
            engines.append(await addAccount(client: client, store: store, pageLimit: pageLimit))
        }
        return engines
    }

    private func signOut(account key: String, announce: Bool) async {
        guard let account = accounts.removeValue(forKey: key) else { return }
        await scheduler.removeAccount(key)
        await account.stream?.stop()
        account.housekeeping?.finish()
        for task in account.tasks { task.cancel() }
        account.outboxRetry?.cancel()
        queuedHousekeeping[key] = nil
        resumeSettledWaiters()
        if announce { broadcaster.publish(.signedOut(account: key)) }
    }

    /// Signs an account that needs reauthentication in again with a new token: polling resumes and, when
    /// the tiers allow it, the stream opens again.
    public func signIn(account key: String, token: String) async {
        guard let account = accounts[key] else { return }
        account.engine.client.authorization.signIn(token: token)
        _ = try? await account.engine.refreshFilters()
        await scheduler.resumeAccount(key)
        await reevaluateStreams(resume: true)
    }

    /// Whether an account's token was refused (it waits for ``signIn(account:token:)``).
    public func needsReauthentication(_ key: String) -> Bool {
        accounts[key]?.engine.client.authorization.authState == .needsReauthentication
    }

    /// A push registration of an account started or ended: its tiers are chosen again.
    public func setPush(_ push: MastodonPushRegistration, account key: String) async {
        guard accounts[key] != nil else { return }
        accounts[key]?.push = push
        await scheduler.updateAccount(key, capabilities: accounts[key]?.capabilities, push: push)
    }

    /// Sets what the account's user stream does with each `notification` event, at once (before the stream's
    /// coalesced poll stores it): the notification policy's stream path (TidingsPush's
    /// `MastodonNotificationRaiser.followStreamedNotifications(of:)`). Takes effect for the stream open now and
    /// every later one; nil stops it. Forgotten when the account signs out or is added again.
    public func setStreamNotificationHandler(
        account key: String, _ handler: (@Sendable (MastodonNotification) async -> Void)?
    ) {
        guard accounts[key] != nil else { return }
        accounts[key]?.onNotification = handler
    }

    /// Fetches an account's capabilities again (launch, or when the server may have changed); when they
    /// changed, the engine, the scheduler and the stream follow them.
    ///
    /// - Throws: ``MastodonError`` from the instance endpoints (the kept capabilities stay).
    @discardableResult
    public func refreshCapabilities(account key: String) async throws -> MastodonCapabilities? {
        guard let engine = accounts[key]?.engine else { return nil }
        let fresh = try await engine.refreshCapabilities()
        guard accounts[key] != nil, accounts[key]?.capabilities != fresh else { return fresh }
        accounts[key]?.capabilities = fresh
        broadcaster.publish(.capabilities(account: key, fresh))
        await scheduler.updateAccount(key, capabilities: fresh, push: accounts[key]?.push ?? .none)
        await reevaluateStreams(resume: true)
        return fresh
    }

    // MARK: The app's state

    /// The one way the app tells sync what it is doing: forwarded to the scheduler, then the user stream is
    /// opened or closed by the tiers (closed at once on background, offline or another active account), and
    /// every engine told the network path. It returns without waiting for the network: the markers and outbox
    /// work a change starts (foreground: markers read, outbox replayed; background: pending markers posted;
    /// network return: a marker post that waited, outbox replayed) runs on each account's one background task,
    /// in the order of the changes, cancelled when the account is signed out. ``housekeepingSettled()`` waits for
    /// it (e.g. inside the platform's background-task window after going to the background).
    public func appStateChanged(_ event: MastodonAppEvent) async {
        var resume = false
        let wasForeground = foreground
        switch event {
        case .foreground(let isForeground):
            resume = isForeground && !foreground
            foreground = isForeground
        case .activeAccount(let key):
            resume = key != activeAccount
            activeAccount = key
        case .networkPath(let path):
            resume = path.satisfied && !online
            online = path.satisfied
            // At once, before any debounced marker post can come due on the old path.
            for key in accounts.keys.sorted() { await accounts[key]?.engine.setNetworkSatisfied(path.satisfied) }
        case .visibleTimeline, .interaction, .lowPower, .settings:
            break
        }
        await scheduler.appStateChanged(event)
        await reevaluateStreams(resume: resume)
        switch event {
        case .foreground(let isForeground) where isForeground && resume:
            enqueueHousekeeping(.foreground)
        case .foreground(let isForeground) where !isForeground && wasForeground:
            enqueueHousekeeping(.background)
        case .networkPath(let path) where resume || (path.satisfied && lacksCapabilities):
            // Also on a path update that finds the sync object already online: a path monitor that reports
            // late leaves an offline launch believing it was online, and nothing else would fetch again.
            enqueueHousekeeping(.networkReturn)
        default:
            break
        }
    }

    /// Waits until every account's housekeeping queued so far (markers, outbox; see ``appStateChanged(_:)``) has
    /// run, or its account was signed out. Failures stay with each engine: a marker or an action that did not go
    /// out is kept for the next time.
    public func housekeepingSettled() async {
        guard queuedHousekeeping.values.contains(where: { $0 > 0 }) else { return }
        await withCheckedContinuation { settleWaiters.append($0) }
    }

    /// Queues `job` for every signed-in account, in key order.
    private func enqueueHousekeeping(_ job: Housekeeping) {
        for key in accounts.keys.sorted() {
            guard let queue = accounts[key]?.housekeeping else { continue }
            queuedHousekeeping[key, default: 0] += 1
            queue.yield(job)
        }
    }

    private func housekeepingDone(_ key: String) {
        guard let count = queuedHousekeeping[key] else { return }
        queuedHousekeeping[key] = max(0, count - 1)
        resumeSettledWaiters()
    }

    private func resumeSettledWaiters() {
        guard !queuedHousekeeping.values.contains(where: { $0 > 0 }) else { return }
        let waiters = settleWaiters
        settleWaiters = []
        for waiter in waiters { waiter.resume() }
    }

    /// Whether an account was added without its capabilities (the server was unreachable or failed).
    private var lacksCapabilities: Bool { accounts.values.contains { $0.capabilities == nil } }

    /// Before a foreground's or a network return's housekeeping: what an offline (or failed) launch could not
    /// fetch — the capabilities, then the filters and the stream they allow, and the server's markers (the
    /// foreground job reads them anyway). Nothing is asked for an account whose capabilities are known and
    /// whose markers were read, so a return costs no request more than before.
    private func fetchWhatLaunchMissed(_ key: String, engine: MastodonAccountEngine, job: Housekeeping) async {
        guard job != .background, online, accounts[key]?.engine === engine,
            engine.client.authorization.authState == .signedIn
        else { return }
        if accounts[key]?.capabilities == nil {
            guard let fetched = try? await engine.capabilities(), accounts[key]?.engine === engine else { return }
            accounts[key]?.capabilities = fetched
            broadcaster.publish(.capabilities(account: key, fetched))
            await scheduler.updateAccount(key, capabilities: fetched, push: accounts[key]?.push ?? .none)
            _ = try? await engine.refreshFilters()
            await reevaluateStreams(resume: true)
        }
        if job == .networkReturn, await !engine.serverMarkersRead { _ = try? await engine.syncMarkers() }
    }

    private static func run(_ job: Housekeeping, on engine: MastodonAccountEngine) async {
        switch job {
        case .foreground:
            _ = try? await engine.syncMarkers()
            await engine.replayOutbox()
        case .background:
            _ = try? await engine.enterBackground()
        case .networkReturn:
            await engine.postWaitingMarkers()
            await engine.replayOutbox()
        }
    }

    /// One explicit sync of an account, as a periodic `sync` (a timer, `tidings mastodon sync`, pull to refresh)
    /// needs to converge with the server: the capabilities, Home refreshed from its newest cached status,
    /// notifications polled and the unread count read, the server's markers read, then the newest
    /// ``MastodonMaintenancePolicy/recheckLimit`` cached Home statuses asked again
    /// (``MastodonAccountEngine/recheck(_:timeline:limit:)``: batched on Mastodon 4.3+, one by one elsewhere),
    /// so edits and deletions made on the server — which only a stream would tell — reach the store.
    ///
    /// The re-check counts as the account's deletion re-check (the housekeeping's next one waits the policy's
    /// interval from it); it is skipped while the account's polling gate pauses at the server's reserve, which is
    /// left to the person. The polling ticks never run it, so the request rate of polling does not change.
    ///
    /// For example:
    ///
    /// ```swift
    /// let report = try await sync.syncNow(account: "alice@example.social")
    /// print(report?.home.inserted ?? 0, report?.recheck?.deleted.count ?? 0)
    /// ```
    ///
    /// - Parameters:
    ///   - key: The account.
    ///   - progress: Told each step as it starts.
    /// - Returns: What was done; nil for an account that is not signed in here.
    /// - Throws: ``MastodonError`` from the first step that failed (the steps before it are kept), a store error,
    ///   or `CancellationError`.
    public func syncNow(
        account key: String, progress: @Sendable (MastodonSyncStep) -> Void = { _ in }
    ) async throws -> MastodonSyncReport? {
        guard let engine = accounts[key]?.engine else { return nil }
        progress(.capabilities)
        let capabilities = try await engine.capabilities()
        progress(.home)
        let home = try await engine.refresh()
        progress(.notifications)
        try await engine.pollNotifications()
        let unread = try? await engine.pollUnreadCount()
        progress(.markers)
        try await engine.syncMarkers()
        var report = MastodonSyncReport(capabilities: capabilities, home: home, unread: unread)
        guard maintenancePolicy.recheckLimit > 0, accounts[key]?.engine === engine else { return report }
        if let gate = accounts[key]?.gate, await gate.pause() > .zero { return report }
        progress(.recheck)
        report.recheck = try await engine.recheck(limit: maintenancePolicy.recheckLimit)
        if accounts[key]?.engine === engine { accounts[key]?.lastRecheck = timeline.elapsed }
        return report
    }

    /// A push woke the app for an account: one poll tick, whatever the preset.
    public func pushArrived(account key: String) async {
        await scheduler.pushArrived(account: key)
    }

    /// A timeline appeared on screen: one refresh, joining one in flight.
    ///
    /// - Returns: Whether a refresh ran (false offline or for an unknown account).
    /// - Throws: ``MastodonError`` from the refresh.
    @discardableResult
    public func timelineAppeared(_ name: String, account key: String) async throws -> Bool {
        try await scheduler.timelineAppeared(name, account: key)
    }

    /// The system's background refresh: notifications of every account that needs them within `budget`
    /// (see ``MastodonPollScheduler/backgroundRefresh(budget:)``).
    public func backgroundRefresh(budget: Duration = .seconds(25)) async -> MastodonBackgroundRefreshReport {
        await scheduler.backgroundRefresh(budget: budget)
    }

    /// When the app should schedule its next background refresh (never under 15 minutes).
    public var backgroundRefreshHint: Duration {
        get async { await scheduler.backgroundRefreshHint }
    }

    /// Stops every account's polling and stream (the stores stay as they are).
    public func shutdown() async {
        for key in Array(accounts.keys) { await signOut(account: key, announce: false) }
        await scheduler.shutdown()
    }

    // MARK: Maintenance

    /// The platform's maintenance window: one retention sweep pass per store, and deletion re-checks of each
    /// account's newest cached Home statuses when its last re-check (here or after a foreground or network
    /// return) is older than the policy's interval — skipped (``MastodonMaintenanceReport/recheckSkipped``)
    /// while the account's polling gate pauses at the server's reserve, which is left to the person.
    /// A failing or skipped re-check deletes nothing and is tried again at the next call. Then the policy's image cache
    /// is evicted down to its capacity and its staging directory of copied uploads swept.
    ///
    /// - Throws: A store error of a sweep; ``MastodonImageCacheError`` from the cache or the upload sweep.
    public func maintenance() async throws -> MastodonMaintenanceReport {
        var report = MastodonMaintenanceReport()
        var sweptStores: Set<ObjectIdentifier> = []
        for key in accounts.keys.sorted() {
            guard let store = accounts[key]?.engine.store,
                sweptStores.insert(ObjectIdentifier(store)).inserted
            else { continue }
            report.swept[key] = try await store.sweep(maintenancePolicy.retention)
        }
        for key in accounts.keys.sorted() {
            guard let engine = accounts[key]?.engine else { continue }
            switch await recheckIfDue(key, engine: engine) {
            case .rechecked(let deleted): report.rechecked[key] = deleted
            case .skipped: report.recheckSkipped.append(key)
            case .failed: report.recheckFailed.append(key)
            }
        }
        report.imageCache = try await maintenancePolicy.imageCache?.evict()
        report.uploadsSwept = try await maintenancePolicy.uploads?.sweep() ?? []
        return report
    }

    /// What a deletion re-check of one account came to.
    enum RecheckOutcome {
        /// It ran; how many cached statuses the server no longer has.
        case rechecked(Int)
        /// Not due (within the interval), offline, signed out or refused, or at the server's reserve.
        case skipped
        /// A request failed: nothing was deleted, and the next chance tries again.
        case failed
    }

    /// Re-checks the account's newest cached Home statuses for deletions (Mastodon tells them only over the
    /// stream, so what was deleted while offline is found here) when its last re-check is older than the
    /// policy's interval. Run by ``maintenance()`` and at the end of the foreground's and the network return's
    /// housekeeping; the requests wait for the account's rate budget, and every run leaves the server's reserve
    /// (the polling gate) to the person, trying again at the next chance.
    @discardableResult
    func recheckIfDue(_ key: String, engine: MastodonAccountEngine) async -> RecheckOutcome {
        guard let account = accounts[key], account.engine === engine else { return .skipped }
        let due = account.lastRecheck.map { timeline.elapsed - $0 >= maintenancePolicy.recheckInterval } ?? true
        guard due, online, maintenancePolicy.recheckLimit > 0, engine.client.authorization.authState == .signedIn
        else { return .skipped }
        // The reserve is the person's: a maintenance window cannot wait for the reset, so it skips too.
        if let gate = account.gate, await gate.pause() > .zero { return .skipped }
        // Marked before the requests, so a maintenance window during a housekeeping re-check does not repeat it.
        accounts[key]?.lastRecheck = timeline.elapsed
        do {
            let deleted = try await engine.recheckCachedStatuses(limit: maintenancePolicy.recheckLimit)
            return .rechecked(deleted.count)
        } catch {
            if accounts[key]?.engine === engine { accounts[key]?.lastRecheck = account.lastRecheck }
            return .failed
        }
    }

    // MARK: Streams

    private func publish(_ change: MastodonSyncChange) {
        broadcaster.publish(change)
    }

    /// Opens the stream of the account the tiers allow one for and closes every other.
    private func reevaluateStreams(resume: Bool) async {
        for key in accounts.keys.sorted() {
            guard let account = accounts[key] else { continue }
            let auth = account.engine.client.authorization.authState
            let wanted =
                account.capabilities.map {
                    MastodonTierPolicy.tiers(
                        capabilities: $0,
                        app: MastodonAppState(
                            foreground: foreground, online: online, isActiveAccount: key == activeAccount),
                        push: account.push, auth: auth
                    ).streaming
                } ?? false
            if wanted {
                let stream = account.stream ?? makeStream(key, engine: account.engine)
                switch await stream.state {
                case .stopped: await stream.resume()
                case .gaveUp where resume: await stream.resume()
                default: break
                }
            } else if let stream = account.stream {
                // Even when it still reads `.stopped`: a stream started a moment ago has not left that state yet.
                await stream.stop()
            }
        }
    }

    private func makeStream(_ key: String, engine: MastodonAccountEngine) -> MastodonUserStream {
        let stream = MastodonUserStream(
            engine: engine, connector: streamConnector, clock: clock,
            onFiltersChanged: { [weak engine] in _ = try? await engine?.refreshFilters() },
            onNotification: { [weak self] notification in await self?.streamed(notification, account: key) },
            gate: accounts[key]?.gate, logger: logger)
        let states = stream.stateChanges()
        accounts[key]?.stream = stream
        accounts[key]?.tasks.append(
            Task { [weak self] in
                for await state in states { await self?.streamChanged(key, state) }
            })
        return stream
    }

    private func streamed(_ notification: MastodonNotification, account key: String) async {
        guard let handler = accounts[key]?.onNotification else { return }
        await handler(notification)
    }

    private func streamChanged(_ key: String, _ state: MastodonStreamState) async {
        guard accounts[key] != nil else { return }
        broadcaster.publish(.stream(account: key, state))
        await scheduler.setStreamOpen(state == .open, account: key)
    }
}
