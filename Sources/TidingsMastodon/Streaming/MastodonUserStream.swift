import Foundation
import TidingsCore
import TidingsNet

/// `MastodonUserStream` keeps the user stream (`/api/v1/streaming?stream=user`) of the active account open
/// while the app is in the foreground and online, and feeds its events to the account's engine.
///
/// Guarantees:
/// - The token travels only in the `Authorization` header, never in the URL, and only to a streaming URL
///   ``MastodonStreamingTrust`` accepts (`wss`, the API's host or domain); another gives up at once with
///   ``MastodonStreamGiveUpReason/untrustedStreamingURL(_:)``, logged, and polling stays.
/// - `update` marks Home due: one refresh per ``updateCoalescing`` window, however many posts arrive;
///   `delete` removes the status at once; `status.update` replaces the cached status in place keeping the
///   reader's state; `notification` triggers one notifications poll per burst (``notificationCoalescing``);
///   `filters_changed` calls the app's `onFiltersChanged`.
/// - After every (re)connect the engine backfills from its newest cached IDs before the stream reports
///   ``MastodonStreamState/open`` and reads its events — Home page after page until the gap on top closes (or
///   the feed cap marks what is left unfillable, ``MastodonAccountEngine/backfill(_:maximumPages:beforePage:)``),
///   each page after the first waiting for the gate, then a notifications poll — so nothing sent while the
///   socket was down is lost, and nothing is stored twice.
/// - Failures are retried with jittered backoff on the injected clock; five in a row (a connection that
///   dropped within 30 s of opening counts as one) and it gives up with a reason (``state``) until
///   ``resume()``. A refused token gives up at once.
/// - ``stop()`` (the app went to the background) closes the socket at once.
/// - With a `gate`, the refreshes and polls the stream starts on its own wait while the server's reserve is
///   reached (`X-RateLimit-Remaining` at the gate's reserve) until `X-RateLimit-Reset`, gathering what arrives
///   meanwhile into that one request; a backfill due then is deferred the same way.
public actor MastodonUserStream {
    /// Failures in a row after which the stream gives up.
    public static let maximumFailures = 5
    /// A connection that lived at least this long and then dropped is not a failure.
    public static let healthyConnection: Duration = .seconds(30)
    /// How long `update` events are gathered into one Home refresh.
    public static let updateCoalescing: Duration = .seconds(3)
    /// How long `notification` events are gathered into one notifications poll.
    public static let notificationCoalescing: Duration = .seconds(2)

    /// The account's engine, which every event goes to.
    public nonisolated let engine: MastodonAccountEngine
    private let connector: MastodonStreamConnector
    private let clock: any Clock<Duration>
    private let timeline: Timeline
    private let onFiltersChanged: @Sendable () async -> Void
    private let onNotification: @Sendable (MastodonNotification) async -> Void
    private let gate: PollBudgetGate?
    private let logger: TidingsLogger
    private var backoff: Backoff
    private let broadcaster = ChangeBroadcaster<MastodonStreamState> { _ in .stopped }
    private var runTask: Task<Void, Never>?
    private var connection: (any MastodonStreamConnection)?
    private var homeDue: Task<Void, Never>?
    private var notificationsDue: Task<Void, Never>?
    private var generation = 0
    /// A reconnect's backfill waited for the gate: the coalesced Home refresh runs it in full.
    private var backfillDeferred = false

    /// What the stream is doing now.
    public private(set) var state: MastodonStreamState = .stopped {
        didSet { if state != oldValue { broadcaster.publish(state) } }
    }

    /// How many Home refreshes and notification polls the stream's events caused (for tests and metrics).
    public private(set) var refreshesTriggered = 0
    /// How many notification polls the stream's events caused.
    public private(set) var notificationPollsTriggered = 0

    /// A stream for `engine`'s account.
    ///
    /// - Parameters:
    ///   - engine: The account's engine; its client's token and server are used.
    ///   - connector: Opens connections (``webSocketConnector(clock:connectTimeout:tls:)`` by default).
    ///   - clock: Backoff, coalescing and the 30-second rule run on it.
    ///   - backoff: The retry delays (full jitter); 1 s doubling to 60 s by default.
    ///   - onFiltersChanged: Called on `filters_changed` (the app refetches its filters).
    ///   - onNotification: Called with each `notification` event's notification, at once (before the coalesced
    ///     poll stores it): the notification policy's stream path (TidingsPush's `MastodonNotificationRaiser`).
    ///   - gate: The account's polling gate; the stream's own refreshes and polls wait while it pauses (nil:
    ///     they never wait).
    ///   - logger: Where a refused streaming URL is reported (subsystem `mastodon.stream`; never the token).
    public init(
        engine: MastodonAccountEngine, connector: MastodonStreamConnector? = nil,
        clock: any Clock<Duration> = ContinuousClock(),
        backoff: Backoff = Backoff(base: .seconds(1), cap: .seconds(60)),
        onFiltersChanged: @escaping @Sendable () async -> Void = {},
        onNotification: @escaping @Sendable (MastodonNotification) async -> Void = { _ in },
        gate: PollBudgetGate? = nil, logger: TidingsLogger = .disabled
    ) {
        self.gate = gate
        self.logger = logger.scoped("mastodon.stream")
        self.engine = engine
        self.clock = clock
        self.timeline = Timeline(clock)
        self.connector = connector ?? Self.webSocketConnector(clock: clock)
        self.backoff = backoff
        self.onFiltersChanged = onFiltersChanged
        self.onNotification = onNotification
    }

    /// A fresh stream of state changes for one subscriber.
    public nonisolated func stateChanges() -> ChangeSubscription<MastodonStreamState> { broadcaster.subscribe() }

    /// Starts the stream (foreground, online, active account); nothing when it already runs.
    public func start() {
        guard runTask == nil else { return }
        backoff.reset()
        generation += 1
        let generation = generation
        runTask = Task { await self.run(generation) }
    }

    /// Starts again after a give-up or a stop: the app returned to the foreground, the network returned, or
    /// the account changed. The failure count starts from zero.
    public func resume() {
        if case .open = state { return }
        stopNow()
        start()
    }

    /// Closes the socket at once (the app went to the background, or the account is no longer active).
    public func stop() async {
        let open = connection
        stopNow()
        await open?.close()
    }

    private func stopNow() {
        runTask?.cancel()
        runTask = nil
        homeDue?.cancel()
        homeDue = nil
        notificationsDue?.cancel()
        notificationsDue = nil
        backfillDeferred = false
        connection = nil
        generation += 1
        state = .stopped
    }

    // MARK: The connection loop

    private func run(_ generation: Int) async {
        var failures = 0
        while !Task.isCancelled, generation == self.generation {
            guard engine.client.authorization.authState == .signedIn else {
                state = .gaveUp(.needsReauthentication)
                break
            }
            let url: URL
            do {
                guard let base = try await engine.capabilities().streamingURL, let built = Self.streamURL(base)
                else {
                    state = .gaveUp(.notOffered)
                    break
                }
                // The URL is the server's word: the token goes only where the API's own domain is.
                if let refusal = MastodonStreamingTrust.refusal(streaming: base, api: engine.client.server) {
                    logger.warning("user stream of \(engine.account) not opened, polling stays: \(refusal)")
                    state = .gaveUp(.untrustedStreamingURL(refusal))
                    break
                }
                url = built
            } catch {
                if failures + 1 >= Self.maximumFailures {
                    state = .gaveUp(.tooManyFailures(failures + 1, lastError: Self.describe(error)))
                    break
                }
                failures += 1
                guard await wait(failures: failures, generation: generation) else { break }
                continue
            }
            // A stop while the capabilities were awaited must not be overwritten by a stale `.connecting`.
            guard generation == self.generation, !Task.isCancelled else { break }
            state = .connecting(failures: failures)
            var openedAt: Duration?
            var lastError: String
            do {
                guard let token = engine.client.authorization.currentToken else { continue }
                let connection = try await connector(url, [("Authorization", "Bearer \(token)")])
                guard generation == self.generation, !Task.isCancelled else {
                    await connection.close()
                    break
                }
                self.connection = connection
                openedAt = timeline.elapsed
                // Catch up before reading: events sent meanwhile wait in the socket's buffer and are applied
                // after the backfill, so a deletion still removes what the backfill fetched.
                await backfill()
                guard generation == self.generation, !Task.isCancelled else { break }
                state = .open
                for try await message in connection.messages {
                    guard generation == self.generation else { break }
                    await handle(message)
                }
                lastError = "the server closed the stream"
            } catch {
                lastError = Self.describe(error)
            }
            connection = nil
            guard generation == self.generation, !Task.isCancelled else { break }
            if let openedAt, timeline.elapsed - openedAt >= Self.healthyConnection {
                // A connection that served for a while and then dropped is not a failure: start counting anew.
                failures = 0
                backoff.reset()
            } else {
                failures += 1
            }
            if engine.client.authorization.authState != .signedIn {
                state = .gaveUp(.needsReauthentication)
                break
            }
            if failures >= Self.maximumFailures {
                state = .gaveUp(.tooManyFailures(failures, lastError: lastError))
                break
            }
            guard await wait(failures: failures, generation: generation) else { break }
        }
        if generation == self.generation { runTask = nil }
    }

    /// Sleeps the backoff's next delay; false when stopped meanwhile.
    private func wait(failures: Int, generation: Int) async -> Bool {
        state = .waiting(failures: failures)
        do { try await clock.sleep(for: backoff.nextDelay()) } catch { return false }
        return generation == self.generation && !Task.isCancelled
    }

    /// After a (re)connect: what was posted or notified while the socket was down.
    private func backfill() async {
        // At the server's reserve the backfill waits like any refresh the stream starts; events read meanwhile
        // join it.
        if let gate, await gate.pause() > .zero {
            backfillDeferred = true
            markHomeDue()
            markNotificationsDue()
            return
        }
        // Every page up to the top (an outage may have missed many), each further page waiting for the gate.
        let generation = generation
        _ = try? await engine.backfill { [weak self] in await self?.mayGoOn(generation) ?? false }
        _ = try? await engine.pollNotifications()
    }

    /// Whether a backfill of connection `generation` may read its next page: not stopped, and the gate's pause
    /// (if any) waited out on the clock.
    private func mayGoOn(_ generation: Int) async -> Bool {
        guard generation == self.generation, !Task.isCancelled else { return false }
        return await waitForBudget() && generation == self.generation
    }

    // MARK: Events

    private struct Envelope: Decodable {
        var event: String
        var payload: String?
    }

    private func handle(_ message: WebSocketMessage) async {
        guard case .text(let text) = message,
            let envelope = try? MastodonWire.decode(Envelope.self, from: Data(text.utf8))
        else { return }
        switch envelope.event {
        case "update":
            markHomeDue()
        case "delete":
            if let id = envelope.payload, !id.isEmpty { try? await engine.removeDeleted([ServerID(id)]) }
        case "status.update":
            if let payload = envelope.payload,
                let status = try? MastodonWire.decode(MastodonStatus.self, from: Data(payload.utf8))
            {
                _ = try? await engine.applyEdit(status)
            }
        case "notification":
            markNotificationsDue()
            if let payload = envelope.payload,
                let notification = try? MastodonWire.decode(MastodonNotification.self, from: Data(payload.utf8))
            {
                await onNotification(notification)
            }
        case "filters_changed":
            await onFiltersChanged()
        default:
            break  // events of newer servers, or of streams we did not ask for
        }
    }

    private func markHomeDue() {
        guard homeDue == nil else { return }
        let clock = clock
        homeDue = Task {
            do { try await clock.sleep(for: Self.updateCoalescing) } catch { return }
            guard await self.waitForBudget() else { return }
            await self.refreshHome()
        }
    }

    private func refreshHome() async {
        homeDue = nil
        refreshesTriggered += 1
        if backfillDeferred {
            // The reconnect's backfill, deferred by the gate: all of it, not one page.
            backfillDeferred = false
            let generation = generation
            _ = try? await engine.backfill { [weak self] in await self?.mayGoOn(generation) ?? false }
        } else {
            _ = try? await engine.refresh()
        }
    }

    private func markNotificationsDue() {
        guard notificationsDue == nil else { return }
        let clock = clock
        notificationsDue = Task {
            do { try await clock.sleep(for: Self.notificationCoalescing) } catch { return }
            guard await self.waitForBudget() else { return }
            await self.pollNotifications()
        }
    }

    private func pollNotifications() async {
        notificationsDue = nil
        notificationPollsTriggered += 1
        _ = try? await engine.pollNotifications()
    }

    /// Sleeps on the clock while the gate pauses (the server's reserve is reached, a `Retry-After` holds); false
    /// when the stream stopped meanwhile. A few rounds at most: the budget's reset moves on with each answer.
    private func waitForBudget() async -> Bool {
        guard let gate else { return true }
        for _ in 0..<3 {
            let pause = await gate.pause()
            guard pause > .zero else { return true }
            do { try await clock.sleep(for: pause) } catch { return false }
        }
        return !Task.isCancelled
    }

    /// `<base>/api/v1/streaming?stream=user`: the streaming API's base URL with the user stream's path.
    static func streamURL(_ base: URL) -> URL? {
        guard var components = URLComponents(url: base, resolvingAgainstBaseURL: false) else { return nil }
        switch components.scheme?.lowercased() {
        case "https": components.scheme = "wss"
        case "http": components.scheme = "ws"
        default: break
        }
        let path = components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path
        components.path = path + "/api/v1/streaming"
        components.queryItems = [URLQueryItem(name: "stream", value: "user")]
        return components.url
    }

    /// An error's kind without secrets.
    static func describe(_ error: any Error) -> String {
        (error as? any TidingsError)?.shortDescription ?? "\(type(of: error))"
    }
}
