import Foundation
import TidingsCore
import TidingsMastodon

/// `MastodonPushAccount` keeps one Mastodon account's Web Push in line with its notification settings and
/// tells the rest of the engine about it: the registration is reconciled at launch (idempotently: nothing is
/// sent when the server already has this endpoint, keys and alerts), a change of the category switches sends
/// `PUT /api/v1/push/subscription` only when the alerts it maps to changed, the account's endpoint is routed to
/// its raiser, and the polling scheduler learns whether the account is pushed (a pushed account is still
/// polled, at most every 10 minutes in the background, by the scheduler's own rule).
public actor MastodonPushAccount {
    /// The account's raiser, which every push for the endpoint goes to.
    public nonisolated let raiser: MastodonNotificationRaiser
    /// The account's registrar.
    public nonisolated let registrar: MastodonWebPushRegistrar
    let router: PushAccountRouter
    let scheduler: MastodonPollScheduler?
    let pushPolicy: MastodonPushPolicy
    var sentAlerts: MastodonPushAlerts?
    /// The registration's state after the last launch, change or sign-out.
    public private(set) var status: MastodonPushRegistrationStatus = .none

    /// Joins `raiser` and `registrar`; routes through `router` and informs `scheduler` (if the app polls).
    ///
    /// - Parameters:
    ///   - raiser: The account's raiser, which decides every push, poll and stream notification.
    ///   - registrar: The account's Web Push registration with its Mastodon server.
    ///   - router: The process's router; the account's endpoint is routed to `raiser`.
    ///   - scheduler: The app's poll scheduler, told that the account is pushed (nil when the app does not poll).
    ///   - pushPolicy: Mastodon's `data[policy]` (whose pushes the server sends).
    public init(
        raiser: MastodonNotificationRaiser, registrar: MastodonWebPushRegistrar, router: PushAccountRouter,
        scheduler: MastodonPollScheduler? = nil, pushPolicy: MastodonPushPolicy = .all
    ) {
        self.raiser = raiser
        self.registrar = registrar
        self.router = router
        self.scheduler = scheduler
        self.pushPolicy = pushPolicy
    }

    /// The alert keys that the account's category switches turn on (`reply` rides on `mention`; the
    /// categories without an alert key arrive only through the poll).
    public static func alerts(for settings: NotificationSettings) -> MastodonPushAlerts {
        MastodonPushAlerts(categories: Set(settings.enabledCategories.map(\.rawValue)))
    }

    /// At launch, and whenever the platform hands out a new endpoint: reconciles the subscription with the
    /// current settings, routes `endpoint` to the raiser and tells the scheduler whether pushes arrive.
    ///
    /// - Returns: The registration's state; a failure keeps whatever the server had and is retried next time.
    @discardableResult
    public func launch(endpoint: URL) async -> MastodonPushRegistrationStatus {
        let alerts = Self.alerts(for: await raiser.currentConfiguration.settings)
        status = await registrar.reconcile(endpoint: endpoint, alerts: alerts, policy: pushPolicy)
        if case .active = status { sentAlerts = alerts }
        router.register(endpoint, to: raiser)
        await tellScheduler()
        return status
    }

    /// New settings for the account: the raiser decides with them from now on, and when the alert keys they
    /// map to differ from what the server has, `PUT /api/v1/push/subscription` sends them.
    ///
    /// - Returns: The registration's state (unchanged when nothing had to be sent).
    @discardableResult
    public func change(settings: NotificationSettings) async -> MastodonPushRegistrationStatus {
        var configuration = await raiser.currentConfiguration
        configuration.settings = settings
        await raiser.configure(configuration)
        let alerts = Self.alerts(for: settings)
        guard case .active = status, alerts != sentAlerts else { return status }
        status = await registrar.change(alerts: alerts, policy: pushPolicy)
        if case .active = status { sentAlerts = alerts }
        await tellScheduler()
        return status
    }

    /// Signs the account out of push and notifications: stops routing its endpoint, then the raiser's
    /// ``MastodonNotificationRaiser/signOut(alsoWithdrawing:)`` (withdrawals, raised set, registrations), then
    /// withdraws its own registrar's subscription (`DELETE /api/v1/push/subscription`, its keys) unless the raiser
    /// was given that registrar already — so the server stops pushing however the raiser was built; a
    /// subscription the server no longer has (404) counts as removed — and tells the scheduler the account is no
    /// longer pushed.
    ///
    /// - Returns: The raiser's report; a subscription the server could not be told about is in its `failures`
    ///   under `mastodon` (the keys are deleted all the same).
    /// - Throws: A store error from the raised set's deletion.
    public func signOut() async throws -> MastodonNotificationRaiser.SignOutReport {
        router.remove(account: raiser.account)
        var report = try await raiser.signOut()
        if !raiser.registrations.contains(where: { ($0 as? MastodonWebPushRegistrar) === registrar }) {
            do {
                try await registrar.withdrawRegistration()
            } catch {
                report.failures[registrar.registrationName] =
                    (error as? any TidingsError)?.description ?? "\(type(of: error))"
            }
        }
        status = .none
        sentAlerts = nil
        await tellScheduler()
        return report
    }

    private func tellScheduler() async {
        guard let scheduler else { return }
        let capabilities = try? await raiser.engine.capabilities()
        await scheduler.updateAccount(raiser.account, capabilities: capabilities, push: status.tierRegistration)
    }
}
