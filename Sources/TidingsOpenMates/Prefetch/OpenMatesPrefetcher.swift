import TidingsCore

/// Offline prefetch: fills the store with the content of the chats after the first 10 (those come with phase
/// 1b) through `POST /v1/sync/offline-prefetch`, from cursor 10 in chunks of 3 until the server says `done`,
/// only while the device allows it.
///
/// Guarantees:
/// - It runs only while ``OpenMatesPrefetchConditions/allowsPrefetch`` (online, not expensive, not constrained,
///   Low Power Mode off, thermal state nominal or fair) and the store holds fewer than
///   ``Configuration/maximumStoredMessages`` messages (checked before every request). A change that blocks it
///   stops it at once: the request in flight is cancelled and its page is not stored. It starts again when
///   the conditions allow it again, on ``start()``, and, once attached to a client (``attach(to:)``), after
///   each completed phased sync and after the offline-action queue has drained (a replay).
/// - Requests are at least ``Configuration/spacing`` apart (2 s: never more than 30 in any minute), also across
///   stops and restarts; each first waits for the rate budget (30 a minute in its own family), which also
///   holds every request after a 429 until its `Retry-After`. Every request has a deadline on the injected
///   clock (``Configuration/requestTimeout``) and is cancelled when it passes, when prefetch stops and on logout.
/// - Each page is stored in one transaction with the cursor past it (durable; reset when the server says
///   `done`, also on an extra empty page, or when the cursor leaves the server's 10…100 range), under the sync
///   rules (``OpenMatesPrefetchPlanner``): never over a newer version, the server's unread state or keys; never
///   a deleted or hidden chat; chats stored at an equal or newer version are skipped.
/// - A failed request (a 5xx, a garbage body, a deadline, 401) stores nothing and stops prefetch with the typed
///   error in ``State/failed(_:)``; the next trigger retries from the same cursor.
/// - ``logout()`` cancels it for good, and a client it is attached to calls it before erasing the store.
///
/// It runs on its store's executor, so its synchronous store calls never block a pool thread.
///
/// For example:
/// ```swift
/// let prefetcher = OpenMatesPrefetcher(transport: transport, store: client.store, clock: ContinuousClock())
/// await prefetcher.attach(to: client)
/// await prefetcher.update(OpenMatesPrefetchConditions(isOnline: true, isExpensive: path.isExpensive))
/// ```
public actor OpenMatesPrefetcher {
    /// Settings that do not change while the prefetcher runs.
    public struct Configuration: Sendable {
        /// Chats per request (the server accepts 1…5).
        public var chunkSize: Int
        /// The least time between two requests.
        public var spacing: Duration
        /// The deadline of one request.
        public var requestTimeout: Duration
        /// Prefetch does not start a request while the store holds this many messages.
        public var maximumStoredMessages: Int
        /// Whether embeds and embed keys are asked for.
        public var includeEmbeds: Bool
        /// The account the rate budget counts for (an identifier, never a secret).
        public var account: String?

        /// The defaults: chunks of 3, 2 s apart, 30 s per request, a cap of 10,000 stored messages, embeds.
        public init(
            chunkSize: Int = 3, spacing: Duration = .seconds(2), requestTimeout: Duration = .seconds(30),
            maximumStoredMessages: Int = 10_000, includeEmbeds: Bool = true, account: String? = nil
        ) {
            self.chunkSize = min(max(chunkSize, 1), OpenMatesPrefetchRequest.limitRange.upperBound)
            self.spacing = max(spacing, .zero)
            self.requestTimeout = max(requestTimeout, .milliseconds(1))
            self.maximumStoredMessages = max(0, maximumStoredMessages)
            self.includeEmbeds = includeEmbeds
            self.account = account
        }
    }

    /// Where prefetch stands.
    public enum State: Sendable, Hashable {
        /// Not started yet: waiting for ``start()``, allowing conditions or a client's trigger.
        case idle
        /// Fetching; the next request asks from `cursor`.
        case running(cursor: Int)
        /// Stopped because the device's conditions do not allow it.
        case blocked(OpenMatesPrefetchConditions.Block)
        /// Stopped because the store holds the most messages prefetch may fill it to.
        case capReached(storedMessages: Int)
        /// The server said `done`: the pass is complete and the cursor is back at the start.
        case finished
        /// A request or page failed; nothing of it was stored. The next trigger retries from the same cursor.
        case failed(OpenMatesPrefetchError)
        /// Logged out: prefetch never runs again on this prefetcher.
        case loggedOut
    }

    /// What a subscriber of ``events(bufferingLimit:)`` learns.
    public enum Event: Sendable, Hashable {
        /// The state changed.
        case state(State)
        /// A page was stored (re-read the store); `nextCursor` is nil when the pass is done.
        case pageStored(cursor: Int, nextCursor: Int?, plan: OpenMatesPrefetchPlanner.Plan)
        /// The server answered 429; the next request waits for the budget (and `Retry-After`).
        case rateLimited
        /// The subscriber fell behind and missed this many events.
        case lagged(Int)
    }

    /// The family the rate budget meters prefetch in.
    public static let rateLimitFamily = RateLimitFamily(rawValue: "openMatesPrefetch")
    /// The server's limit: 30 requests a minute.
    public static let rateLimit = RateBudget.Limit(requests: 30, window: .seconds(60))

    let configuration: Configuration
    let transport: any OpenMatesPrefetchTransport
    /// The store prefetch fills.
    public nonisolated let store: OpenMatesStore
    let timeline: Timeline
    let budget: RateBudget
    let logger: TidingsLogger
    let broadcaster = ChangeBroadcaster<Event> { .lagged($0) }

    /// The conditions the app last reported.
    public private(set) var conditions: OpenMatesPrefetchConditions
    /// Where prefetch stands.
    public internal(set) var state: State = .idle
    var runTask: Task<Void, Never>?
    var observeTask: Task<Void, Never>?
    /// Bumped whenever a run is stopped, so a stopped run's late answer is never stored.
    var generation = 0
    var lastRequestAt: Duration?
    /// Requests sent (answered or not), for summaries and tests.
    public internal(set) var requestsSent = 0

    /// Runs the prefetcher's jobs on the store's queue.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { store.executor.asUnownedSerialExecutor() }

    /// Creates a prefetcher; nothing is sent before the conditions allow it and something starts it.
    ///
    /// - Parameters:
    ///   - configuration: Chunk size, spacing, cap, deadline and rate limit.
    ///   - transport: What sends the prefetch requests (HTTP in an app, the sandbox in tests).
    ///   - store: The store pages are written to, under the sync rules; the prefetcher runs on its queue.
    ///   - clock: The clock spacing, deadlines and `Retry-After` are measured on.
    ///   - rateBudget: A budget shared with the app; it must meter ``rateLimitFamily`` at ``rateLimit`` (in its
    ///     `familyLimits`). nil: a budget of the prefetcher's own on `clock`.
    ///   - conditions: The device's conditions at creation (``OpenMatesPrefetchConditions/unknown``: offline).
    ///   - logger: Where progress and failures are logged (never a cookie or token).
    public init(
        configuration: Configuration = Configuration(), transport: any OpenMatesPrefetchTransport,
        store: OpenMatesStore, clock: any Clock<Duration>, rateBudget: RateBudget? = nil,
        conditions: OpenMatesPrefetchConditions = .unknown, logger: TidingsLogger = .disabled
    ) {
        self.configuration = configuration
        self.transport = transport
        self.store = store
        self.timeline = Timeline(clock)
        self.budget =
            rateBudget
            ?? RateBudget(
                configuration: .init(
                    requestsPerWindow: Self.rateLimit.requests, window: Self.rateLimit.window,
                    familyLimits: [Self.rateLimitFamily: Self.rateLimit]),
                clock: clock)
        self.conditions = conditions
        self.logger = logger.scoped("openmates.prefetch")
    }

    /// A fresh stream of events for one subscriber (bounded; a lagging one reads ``Event/lagged(_:)``).
    public nonisolated func events(bufferingLimit: Int = 256) -> ChangeSubscription<Event> {
        broadcaster.subscribe(bufferingLimit: bufferingLimit)
    }

    /// Takes the device's current conditions: a change that blocks prefetch stops it at once (the request in
    /// flight is cancelled, its page not stored); a change that allows it again starts it.
    public func update(_ conditions: OpenMatesPrefetchConditions) {
        let previous = self.conditions
        self.conditions = conditions
        guard state != .loggedOut else { return }
        if let block = conditions.block {
            stopRun()
            setState(.blocked(block))
        } else if previous.block != nil {
            trigger("conditions allow prefetch again")
        }
    }

    /// Starts prefetching when the conditions allow it and it is not running (a finished pass starts again from
    /// the first cursor, a failed one from where it stopped).
    public func start() { trigger("started") }

    /// Stops prefetching until the next trigger; the cursor stays where it is.
    public func stop() {
        guard state != .loggedOut else { return }
        stopRun()
        setState(.idle)
    }

    /// Logout: cancels the request in flight, resets the cursor and never runs again. Returns once the run has
    /// ended, so nothing it fetched can be stored after this returns.
    public func logout() async {
        let running = runTask
        stopRun()
        observeTask?.cancel()
        observeTask = nil
        do { try store.resetPrefetchCursor() } catch {
            logger.notice("could not reset the prefetch cursor at logout: \(error)")
        }
        setState(.loggedOut)
        broadcaster.finish()
        await running?.value
    }

    /// Waits until the current run (if any) has ended: finished, blocked, failed or stopped.
    public func untilSettled() async {
        while let running = runTask { await running.value }
    }

    /// Follows `client`: starts after each completed phased sync and after its offline-action queue drains, and
    /// is logged out (``logout()``) before the client erases the store at logout or `force_logout`.
    public func attach(to client: OpenMatesClient) async {
        await client.addLogoutObserver { [weak self] in await self?.logout() }
        let changes = client.changes()
        observeTask?.cancel()
        observeTask = Task { [weak self] in
            var complete = false
            for await change in changes {
                switch change {
                case .status(let status):
                    let nowComplete = status.sync == .complete
                    if nowComplete, !complete { await self?.trigger("phased sync complete") }
                    complete = nowComplete
                case .actionSucceeded, .actionFailed: await self?.replayProgressed()
                default: break
                }
            }
        }
    }

    func replayProgressed() {
        let pending = (try? store.count(.pendingActions)) ?? 1
        if pending == 0 { trigger("offline actions replayed") }
    }

    func setState(_ new: State) {
        guard new != state else { return }
        state = new
        broadcaster.publish(.state(new))
    }

    /// Ends the current run (if any) so that nothing it still receives is stored.
    func stopRun() {
        generation &+= 1
        runTask?.cancel()
        runTask = nil
    }

    func trigger(_ reason: String) {
        guard state != .loggedOut, runTask == nil else { return }
        if let block = conditions.block {
            setState(.blocked(block))
            return
        }
        logger.debug("prefetch starts: \(reason)")
        generation &+= 1
        let generation = self.generation
        runTask = Task { await self.run(generation) }
    }
}
