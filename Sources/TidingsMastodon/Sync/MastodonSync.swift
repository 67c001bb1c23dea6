import Foundation
import TidingsCore

/// `MastodonSync` is the one object an app talks to for its Mastodon accounts: it owns each signed-in
/// account's ``MastodonAccountEngine``, one ``MastodonPollScheduler`` driving them, and the user stream of the
/// active account.
///
/// Guarantees:
/// - Each account's capabilities are fetched when it is added and on ``refreshCapabilities(account:)``; the
///   engine and the scheduler get them, so a v1-only server is not asked v2 first and the tiers are chosen
///   again whenever they change.
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
///   action pending. Its markers are read (``MastodonAccountEngine/syncMarkers()``) when it is added and on
///   foreground, and posted at once (``MastodonAccountEngine/enterBackground()``) when the app goes to the
///   background.
/// - ``changes()`` merges every engine's changes and every stream's states into one bounded stream per subscriber.
/// - ``signOut(account:)`` stops the account's polling and stream; a refused token (needs reauthentication)
///   stops them until ``signIn(account:token:)``.
/// - ``maintenance()`` sweeps each store once per call within ``MastodonMaintenancePolicy/retention`` and
///   re-checks cached statuses for deletions at most once per ``MastodonMaintenancePolicy/recheckInterval``
///   per account, through the account's rate budget.
public actor MastodonSync {
    private struct Account {
        let engine: MastodonAccountEngine
        var capabilities: MastodonCapabilities?
        var push: MastodonPushRegistration
        var stream: MastodonUserStream?
        var onNotification: (@Sendable (MastodonNotification) async -> Void)?
        var tasks: [Task<Void, Never>] = []
        var lastRecheck: Duration?
    }

    /// The scheduler polling every account (for diagnostics, plans and tests).
    public nonisolated let scheduler: MastodonPollScheduler
    private let clock: any Clock<Duration>
    private let timeline: Timeline
    private let streamConnector: MastodonStreamConnector?
    private let maintenancePolicy: MastodonMaintenancePolicy
    private let broadcaster = ChangeBroadcaster<MastodonSyncChange> { .missed($0) }
    private var accounts: [String: Account] = [:]
    private var foreground = true
    private var online = true
    private var activeAccount: String?

    /// A sync object with no account, in the foreground and online.
    ///
    /// - Parameters:
    ///   - clock: Polling, streaming backoff and maintenance cadence run on it (`TestClock` in tests).
    ///   - settings: The user's polling preset and "Wi-Fi only".
    ///   - configuration: The polling loops' backoff and penalty.
    ///   - streamConnector: Opens user streams (TidingsNet's WebSocket when nil).
    ///   - maintenance: The retention limits and the deletion re-check cadence.
    ///   - random: Polling jitter in `0..<1`.
    public init(
        clock: any Clock<Duration> = ContinuousClock(), settings: MastodonPollSettings = MastodonPollSettings(),
        configuration: PollLoopConfiguration = PollLoopConfiguration(),
        streamConnector: MastodonStreamConnector? = nil,
        maintenance: MastodonMaintenancePolicy = MastodonMaintenancePolicy(),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
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
    /// - Parameters:
    ///   - client: The account's API client (its key is the account's key).
    ///   - store: The store (opened with ``MastodonTimelineSchema/schema``); accounts may share one.
    ///   - push: Whether a push registration is live for it.
    ///   - gate: The shared rate budget the scheduler consults before each tick.
    ///   - pageLimit: The `limit` of timeline and notification pages.
    /// - Returns: The account's engine.
    @discardableResult
    public func addAccount(
        client: MastodonAPIClient, store: MastodonTimelineStore, push: MastodonPushRegistration = .none,
        gate: PollBudgetGate? = nil, pageLimit: Int = 40
    ) async -> MastodonAccountEngine {
        let key = client.accountKey
        await signOut(account: key, announce: false)
        let engine = MastodonAccountEngine(client: client, store: store, clock: clock, pageLimit: pageLimit)
        let capabilities = try? await engine.capabilities()
        // Filters at sign-in and launch; a server without them (Nextcloud Social) or offline leaves them nil.
        if capabilities != nil { _ = try? await engine.refreshFilters() }
        var account = Account(engine: engine, capabilities: capabilities, push: push)
        let changes = engine.changes()
        account.tasks.append(
            Task { [weak self] in
                for await change in changes { await self?.publish(.engine(account: key, change)) }
            })
        let authorization = client.authorization
        let authChanges = authorization.changes()
        account.tasks.append(
            Task { [weak self] in
                for await _ in authChanges { await self?.reevaluateStreams(resume: true) }
            })
        accounts[key] = account
        if let capabilities { broadcaster.publish(.capabilities(account: key, capabilities)) }
        await scheduler.addAccount(
            MastodonPollAccount(
                key: key, target: engine, capabilities: capabilities, push: push, authorization: authorization,
                gate: gate))
        await reevaluateStreams(resume: false)
        // Launch and sign-in: the server's read positions, then what was left pending before the restart.
        if capabilities != nil { _ = try? await engine.syncMarkers() }
        if online { await engine.replayOutbox() }
        return engine
    }

    /// Signs an account out: its polling and stream stop and it is forgotten (its cached rows stay in the store).
    public func signOut(account key: String) async {
        await signOut(account: key, announce: true)
    }

    private func signOut(account key: String, announce: Bool) async {
        guard let account = accounts.removeValue(forKey: key) else { return }
        await scheduler.removeAccount(key)
        await account.stream?.stop()
        for task in account.tasks { task.cancel() }
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
    /// opened or closed by the tiers (closed at once on background, offline or another active account).
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
        case .visibleTimeline, .interaction, .lowPower, .settings:
            break
        }
        await scheduler.appStateChanged(event)
        await reevaluateStreams(resume: resume)
        switch event {
        case .foreground(let isForeground) where isForeground && resume:
            await forEachEngine { engine in
                _ = try? await engine.syncMarkers()
                await engine.replayOutbox()
            }
        case .foreground(let isForeground) where !isForeground && wasForeground:
            // The debounce would not outlive the app's suspension: post the pending markers now.
            await forEachEngine { engine in _ = try? await engine.enterBackground() }
        case .networkPath where resume:
            await forEachEngine { engine in await engine.replayOutbox() }
        default:
            break
        }
    }

    /// Runs `body` for every signed-in account's engine, in key order (failures stay with each engine: a
    /// marker or an action that did not go out is kept for the next time).
    private func forEachEngine(_ body: (MastodonAccountEngine) async -> Void) async {
        for key in accounts.keys.sorted() {
            guard let engine = accounts[key]?.engine else { continue }
            await body(engine)
        }
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
    /// account's newest cached Home statuses when its last re-check is older than the policy's interval.
    /// A failing re-check deletes nothing and is tried again at the next call. Then the policy's image cache
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
            guard let account = accounts[key] else { continue }
            let now = timeline.elapsed
            let due = account.lastRecheck.map { now - $0 >= maintenancePolicy.recheckInterval } ?? true
            guard due, online, maintenancePolicy.recheckLimit > 0,
                account.engine.client.authorization.authState == .signedIn
            else {
                report.recheckSkipped.append(key)
                continue
            }
            do {
                let deleted = try await account.engine.recheckCachedStatuses(limit: maintenancePolicy.recheckLimit)
                accounts[key]?.lastRecheck = timeline.elapsed
                report.rechecked[key] = deleted.count
            } catch {
                report.recheckFailed.append(key)
            }
        }
        report.imageCache = try await maintenancePolicy.imageCache?.evict()
        report.uploadsSwept = try await maintenancePolicy.uploads?.sweep() ?? []
        return report
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
            onNotification: { [weak self] notification in await self?.streamed(notification, account: key) })
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
