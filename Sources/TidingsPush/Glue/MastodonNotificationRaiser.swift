import Foundation
import TidingsCore
import TidingsMastodon

/// `MastodonNotificationRaiser` is the one place that raises notifications for one Mastodon account: the
/// engine's notifications poll (v1 pages and v2 groups, read back from the engine's store), the user stream's
/// `notification` events, incoming pushes and the background jobs at quiet hours' end and digest times all go
/// through `NotificationPolicyStore.decideAndRecord`, so a notification is raised at most once per server ID
/// whatever the path, a v2 group updates its notification in place, the notifications marker suppresses, and
/// quiet hours and the digest hold.
///
/// Guarantees:
/// - Every decision reaches the app through ``events()`` (a fresh bounded stream per subscriber); the library
///   never displays. A raise or update carries the request to show.
/// - After every run the account's widget line (unread count, recent mentions) goes to the
///   ``NotificationWidgetBoard``, which writes the snapshot and emits the badge/widget redraw signal.
/// - "Now" is the injected ``NotificationPolicyClock`` (a `TestClock` in tests); the time zone is read from the
///   configuration's ``NotificationZoneSource`` at each decision (the device's by default, without ICU on Linux).
/// - It runs on the engine's store queue, so the widget file is never written from the cooperative pool.
public actor MastodonNotificationRaiser {
    /// The account's key (the raised set's and the engine's).
    public nonisolated let account: String
    /// The account's engine, whose stored notifications the polls feed in.
    public nonisolated let engine: MastodonAccountEngine
    /// The raised set and the rest of the policy's durable state.
    public nonisolated let policy: NotificationPolicyStore
    let clock: NotificationPolicyClock
    let board: NotificationWidgetBoard?
    nonisolated let registrations: [any PushRegistrationWithdrawing]
    let keys: (@Sendable () async throws -> WebPushSubscriptionKeys)?
    let wake: (@Sendable () async -> Void)?
    let broadcaster = ChangeBroadcaster<AccountNotificationEvent> { .missed($0) }
    var configuration: NotificationRaiserConfiguration
    var following: Task<Void, Never>?
    var followedCache: [ServerID: FollowedEntry] = [:]

    /// Runs on the engine's store queue.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        engine.store.database.executor.asUnownedSerialExecutor()
    }

    /// A raiser for `engine`'s account.
    ///
    /// - Parameters:
    ///   - engine: The account's engine.
    ///   - policy: The policy's store (may share the engine's file, or be a store of its own).
    ///   - clock: "Now" for every decision.
    ///   - configuration: Settings, push mode, content context, time zone.
    ///   - board: Where the account's widget line goes; nil for no widget snapshot or signal.
    ///   - pushKeys: The account's Web Push keys (content mode decrypts with them), e.g. the registrar's `keys`.
    ///   - registrations: Withdrawn at ``signOut(alsoWithdrawing:)``: the Mastodon subscription, a proxy's or distributor's.
    ///   - wake: What a push in wake mode does; nil polls the engine's notifications now and raises from them.
    ///     An app with a `MastodonPollScheduler` passes `{ await scheduler.pushArrived(account:) }` and
    ///     ``startFollowingPolls()`` so the scheduler's tick (one request, rate budget) does the poll.
    public init(
        engine: MastodonAccountEngine, policy: NotificationPolicyStore, clock: NotificationPolicyClock,
        configuration: NotificationRaiserConfiguration = NotificationRaiserConfiguration(),
        board: NotificationWidgetBoard? = nil, pushKeys: (@Sendable () async throws -> WebPushSubscriptionKeys)? = nil,
        registrations: [any PushRegistrationWithdrawing] = [], wake: (@Sendable () async -> Void)? = nil
    ) {
        self.account = engine.account
        self.engine = engine
        self.policy = policy
        self.clock = clock
        self.configuration = configuration
        self.board = board
        self.keys = pushKeys
        self.registrations = registrations
        self.wake = wake
    }

    /// A fresh stream of this account's notification events for one subscriber.
    public nonisolated func events() -> AsyncStreamOfEvents { broadcaster.subscribe(bufferingLimit: 256) }

    /// The type of ``events()``.
    public typealias AsyncStreamOfEvents = ChangeSubscription<AccountNotificationEvent>

    /// Changes the settings, push mode, content context or time zone from the next decision on.
    public func configure(_ configuration: NotificationRaiserConfiguration) { self.configuration = configuration }

    /// The current configuration.
    public var currentConfiguration: NotificationRaiserConfiguration { configuration }

    /// The one-shot jobs the app schedules after now: each coming digest time and the next end of quiet hours;
    /// at each it calls ``releaseHeld()`` (a job that runs late still delivers).
    public func nextJobTimes() -> [Date] {
        NotificationCalendar(zone: currentZone()).jobTimes(
            after: clock.now, settings: configuration.settings)
    }

    // MARK: Polls

    /// Learns the server's notifications marker (best effort, never waiting on the rate budget: what another
    /// device read is then not raised), polls the account's notifications now (one request) and raises from
    /// what the engine stored.
    ///
    /// - Returns: The decisions, oldest candidate first.
    /// - Throws: `MastodonError` from the poll, or a store error.
    @discardableResult
    public func pollAndRaise() async throws -> [AccountNotificationDecision] {
        try await learnServerMarker()
        try await engine.pollNotifications()
        return try await raiseFromStore()
    }

    /// Decides about every stored notification past the notifications marker (v2 groups and v1 notifications),
    /// oldest first, with origin `poll`: what was raised is dropped, a grown group updates, the rest is raised
    /// or held. Then updates the widget line.
    ///
    /// - Returns: The decisions, oldest candidate first.
    /// - Throws: A store error; what was decided before it stays recorded.
    @discardableResult
    public func raiseFromStore() async throws -> [AccountNotificationDecision] {
        let candidates = await withFollowedAuthors(try await storedCandidates(origin: .poll))
        var decisions: [AccountNotificationDecision] = []
        for candidate in candidates { decisions.append(try await decide(candidate)) }
        await updateWidget()
        return decisions
    }

    /// Decides about one notification the user stream's `notification` event carried (origin `stream`); the
    /// stream's coalesced poll then stores it, and ``raiseFromStore()`` finds it raised.
    ///
    /// - Returns: The decision, or nil for a kind the policy never raises.
    /// - Throws: A store error.
    @discardableResult
    public func streamed(_ notification: MastodonNotification) async throws -> AccountNotificationDecision? {
        guard
            let parsed = NotificationCandidate(
                notification, account: account, origin: .stream, readerID: await readerID()),
            let candidate = await withThreadRoots(
                withFollowedAuthors([parsed]),
                parents: notification.status.map { [$0.id: $0.inReplyToID] } ?? [:]
            ).first
        else { return nil }
        let decision = try await decide(candidate)
        await updateWidget()
        return decision
    }

    /// The background job at a digest time or the end of quiet hours: first learns the server's notifications
    /// marker (what another device read is not raised) and polls the account's notifications (so what a
    /// content-mode push held without the engine storing it is released too) — best effort, never waiting on
    /// the rate budget: a failure or a held budget leaves what is stored; then delivers the digest when one is due (over what the engine lists
    /// as unread past the marker and not yet raised), then decides again about every stored notification past
    /// the marker, so what quiet hours held is raised unless the marker covered it meanwhile.
    ///
    /// When a digest time passed (the summary raised, or nothing left to say) the board's redraw signal says
    /// `digestTime`; a job that is only the end of quiet hours does not.
    ///
    /// - Returns: The digest summary raised (also sent as ``AccountNotificationEvent/digest(_:)``), and the
    ///   decisions of the second step.
    /// - Throws: A store error, or `CancellationError`.
    @discardableResult
    public func releaseHeld() async throws -> (digest: NotificationRequest?, decisions: [AccountNotificationDecision]) {
        try await refreshBeforeRelease()
        var digest: NotificationRequest?
        if configuration.settings.isDigest {
            let unread = await withFollowedAuthors(try await storedCandidates(origin: .poll))
            let outcome = try await policy.deliverDigestIfDue(
                account: account, unread: unread, settings: configuration.settings, context: try await context())
            // A digest time passed (with or without anything to say): widgets redraw. A job at the end of quiet
            // hours before the digest's time is not one.
            if outcome != .notDue { board?.signals.digestTimeArrived(digestOn: true) }
            if case .raise(let summary) = outcome {
                digest = summary
                broadcaster.publish(.digest(summary))
                try await withdrawGenericShown()
            }
        }
        return (digest, try await raiseFromStore())
    }

    /// Follows the engine's changes: after each poll that stored notifications (whoever started it: the
    /// scheduler, the user stream, a push wake) the stored notifications are raised from; a confirmed follow
    /// or unfollow updates whom the reader follows (the digest's exception). Idempotent.
    public func startFollowingPolls() {
        guard following == nil else { return }
        let changes = engine.changes()
        following = Task { [weak self] in
            for await change in changes {
                guard let self else { return }
                switch change {
                case .notifications, .missed: _ = try? await self.raiseFromStore()
                case .actionConfirmed(let pending): await self.relationshipChanged(pending)
                default: break
                }
            }
        }
    }

    /// Stops following the engine's changes.
    public func stopFollowingPolls() {
        following?.cancel()
        following = nil
    }

    /// Tells the app to withdraw these raised notifications (read or removed on another device), through
    /// ``events()`` as ``AccountNotificationEvent/withdrawRaised(_:)``. The raised set keeps them, so they are
    /// not raised again.
    public func withdrawRaised(_ identifiers: [String]) {
        broadcaster.publish(.withdrawRaised(identifiers))
    }

    /// Sends a notification the platform requires to be shown (``AccountNotificationEvent/generic(_:)``).
    func publishGeneric(_ request: NotificationRequest) {
        broadcaster.publish(.generic(request))
    }

    // MARK: Shared steps

    func decide(_ candidate: NotificationCandidate) async throws -> AccountNotificationDecision {
        let (decision, superseded) = try await policy.decideAndRecordSuperseding(
            candidate, settings: configuration.settings, context: try await context())
        let record = AccountNotificationDecision(
            account: account, serverID: candidate.serverID, origin: candidate.origin, decision: decision)
        broadcaster.publish(.decided(record))
        if let superseded { broadcaster.publish(.withdrawRaised([superseded])) }
        if decision.request != nil { try await withdrawGenericShown() }
        return record
    }

    /// A real notification replaces the generic one a push left (``AccountNotificationEvent/generic(_:)``): it is
    /// withdrawn once, by whichever process raises first.
    func withdrawGenericShown() async throws {
        let generic = "\(account)#generic"
        if try await policy.takeShown(account: account, requestIdentifier: generic) {
            broadcaster.publish(.withdrawRaised([generic]))
        }
    }

    func context() async throws -> NotificationPolicyContext {
        NotificationPolicyContext(
            now: clock.now, zone: currentZone(), marker: try await engine.localMarker(.notifications),
            content: configuration.content)
    }

    /// The reader's own ID, which files a reply to the reader as `reply`: the configuration's, or the one the
    /// engine learned at sign-in (`verify_credentials`, kept with the account).
    func readerID() async -> ServerID? {
        if let configured = configuration.readerID { return configured }
        return await engine.readerID
    }

    /// The zone now, from the configuration's source; UTC without reading anything when the settings never read
    /// the local time (no quiet hours, no digest), so such a decision touches no zone file.
    func currentZone() -> NotificationTimeZone {
        configuration.settings.usesLocalTime ? configuration.zone.current() : .zoneInfo(.utc)
    }

    /// The stored notifications past the marker as candidates, oldest first: v2 groups, then v1 notifications
    /// (an engine that fell back to v1 keeps both).
    func storedCandidates(origin: NotificationOrigin) async throws -> [NotificationCandidate] {
        let marker = try await engine.localMarker(.notifications)
        let readerID = await readerID()
        var candidates: [NotificationCandidate] = []
        var parents: [ServerID: ServerID?] = [:]
        for group in try await engine.notificationGroups() {
            if let status = group.status { parents[status.id] = status.inReplyToID }
            if let candidate = NotificationCandidate(group, account: account, origin: origin, readerID: readerID) {
                candidates.append(candidate)
            }
        }
        for notification in try await engine.notifications() {
            if let status = notification.status { parents[status.id] = status.inReplyToID }
            if let candidate = NotificationCandidate(
                notification, account: account, origin: origin, readerID: readerID)
            {
                candidates.append(candidate)
            }
        }
        let unread = candidates.filter { candidate in marker.map { candidate.serverID > $0 } ?? true }
            .sorted { $0.serverID < $1.serverID }
        return await withThreadRoots(unread, parents: parents)
    }

    /// The account's widget line: the unread count (the stored notifications and groups past the marker, or
    /// the server's last unread count when it knows of more not fetched yet) and up to five recent mentions
    /// past the marker.
    func updateWidget() async {
        guard let board else { return }
        guard let candidates = try? await storedCandidates(origin: .poll) else { return }
        let mentions = candidates.reversed().filter { $0.category.isMention }.prefix(WidgetSnapshot.maximumMentions)
            .map { candidate in
                let request = NotificationContentBuilder.request(for: candidate, context: configuration.content)
                return WidgetSnapshot.Mention(
                    id: candidate.serverID, author: candidate.author?.shownName ?? "", text: request.body.text,
                    date: nil)
            }
        let unread = max(await engine.unreadNotificationCount ?? 0, candidates.count)
        let line = WidgetSnapshot.Account(
            account: account, handle: configuration.content.accountHandle, unreadCount: unread,
            recentMentions: Array(mentions))
        _ = try? board.update(line, at: clock.now)
    }
}
