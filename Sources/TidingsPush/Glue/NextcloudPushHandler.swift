import Foundation
import TidingsCore
import TidingsMastodon

/// `NextcloudPushHandler` is the library's glue for the proxy pushes of one Nextcloud account (a Nextcloud
/// Social account is a Mastodon-API account, raised by its ``MastodonNotificationRaiser``).
///
/// Guarantees:
/// - The push's signature is verified by the account's key before anything is decrypted or changed; a push
///   that fails verification, decryption or parsing throws ``NextcloudPushError`` and raises, records and
///   withdraws nothing.
/// - A Social push never raises from its subject (it names no status): it polls the account's notifications
///   from the marker — through the app's `MastodonPollScheduler` when one is given (coalesced with a poll in
///   flight, after a pending `Retry-After`, on the account's rate budget), else through the raiser — and the
///   raiser decides, so the policy decides and records each notification once whatever path (poll, stream,
///   push) saw it first.
/// - `delete`, `delete-multiple` and `delete-all` withdraw the notifications raised for those `nid`s through
///   the raiser's event stream (``AccountNotificationEvent/withdrawRaised(_:)``), each once: the map's rows
///   are removed in the transaction that reads them.
/// - Another app's notification (Talk, Files…) gets the policy's generic wording where the platform requires
///   one (Apple), recorded under its `nid`; elsewhere it is handed to the app.
public struct NextcloudPushHandler: Sendable {
    /// The account's raiser (its engine polls the account's Mastodon-compatible Social API).
    public let raiser: MastodonNotificationRaiser
    /// Verifies and decrypts this account's proxy pushes.
    public let decryptor: NextcloudProxyPushDecryptor
    /// The durable `nid` → raised identifier map.
    public let raised: NextcloudRaisedNotifications
    /// The app's poll scheduler, which polls for a Social push; nil polls through the raiser directly.
    public let scheduler: MastodonPollScheduler?

    /// The account's key (the raiser's).
    public var account: String { raiser.account }

    /// A handler for the account `raiser` raises for.
    ///
    /// - Parameters:
    ///   - raiser: The account's raiser.
    ///   - decryptor: Built from the device key and the `publicKey` the server answered at registration.
    ///   - raised: The `nid` map, on a store whose schema includes ``NextcloudRaisedNotifications/table``.
    ///   - scheduler: The app's scheduler, with the account added under the raiser's account key: a Social push
    ///     asks it for the notifications poll (`MastodonPollScheduler.notificationsRequested(account:)`); nil
    ///     polls through the raiser.
    public init(
        raiser: MastodonNotificationRaiser, decryptor: NextcloudProxyPushDecryptor,
        raised: NextcloudRaisedNotifications,
        scheduler: MastodonPollScheduler? = nil
    ) {
        self.raiser = raiser
        self.decryptor = decryptor
        self.raised = raised
        self.scheduler = scheduler
    }

    /// Handles one proxy push given as its JSON `data` object (`{"subject": …, "signature": …}`).
    ///
    /// - Throws: ``NextcloudPushError`` when the push is not this account's or cannot be opened (nothing
    ///   changed then); `MastodonError` from the Social poll; a store error.
    public func handle(messageJSON bytes: [UInt8]) async throws -> NextcloudPushHandling {
        try await handle(try decryptor.open(messageJSON: bytes))
    }

    /// Handles one proxy push given as its `subject` and `signature` fields.
    ///
    /// - Throws: As ``handle(messageJSON:)``.
    public func handle(subject: String, signature: String) async throws -> NextcloudPushHandling {
        try await handle(try decryptor.open(subject: subject, signature: signature))
    }

    /// Handles a push delivered to the account's Nextcloud Web Push (UnifiedPush) endpoint: `device` opens it with
    /// its stored keys; the activation push activates the subscription (``NextcloudPushHandling/activated(_:)``),
    /// anything else is handled as ``handle(_:)`` handles a subject.
    ///
    /// - Throws: What ``NextcloudWebPushDevice/open(_:)`` throws (nothing changed then), and as ``handle(_:)``.
    public func handle(_ push: IncomingWebPush, device: NextcloudWebPushDevice) async throws -> NextcloudPushHandling {
        switch try await device.open(push) {
        case .activated(let state): .activated(state)
        case .subject(let subject): try await handle(subject)
        }
    }

    /// Handles a subject already verified and decrypted (a Web Push registration's plaintext, or the
    /// router's opened push).
    ///
    /// - Throws: `MastodonError` from the Social poll; a store error.
    public func handle(_ subject: NextcloudProxySubject) async throws -> NextcloudPushHandling {
        switch try await raised.outcome(of: subject, account: account) {
        case .pollNotifications(let nid):
            let decisions: [AccountNotificationDecision]
            if let scheduler {
                _ = try await scheduler.notificationsRequested(account: account)
                decisions = try await raiser.raiseFromStore()
            } else {
                decisions = try await raiser.pollAndRaise()
            }
            _ = try await announced(decisions, nid: nid)
            return .polled(nid: nid, decisions: decisions)
        case .withdraw(let mapped):
            let identifiers = try await shown(mapped, dismissingHeld: true)
            if !identifiers.isEmpty { await raiser.withdrawRaised(identifiers) }
            return .withdrew(raisedIdentifiers: identifiers)
        case .raise(let nid, let app, let text, let type, let id):
            let context = await raiser.currentConfiguration.content
            guard
                let request = NotificationContentBuilder.otherApp(
                    account: account, nid: nid, app: app, subject: text, context: context)
            else { return .otherApp(nid: nid, app: app, subject: text, type: type, id: id) }
            try await raised.record(account: account, nid: nid, raisedIdentifier: request.identifier)
            await raiser.publishGeneric(request)
            return .otherAppRaised(nid: nid, app: app, request: request)
        }
    }

    /// How long before a Social push another path (a tick's poll, the stream) may have raised the notification the
    /// push announces: a push arrives seconds after its notification is made, so what was raised earlier than this
    /// is an older notification, still unread, that no push of now announces.
    public static let announcementWindow: TimeInterval = 600

    /// The subject names an object hash, not a Mastodon notification ID. The notifications a push may announce are
    /// what its poll raised or updated, and what it found raised by another path (the raiser follows the engine's
    /// polls, the stream) within ``announcementWindow``, oldest first; ``NextcloudRaisedNotifications/claim(account:nid:candidates:)``
    /// matches the nids in order to them, so one poll covering several pushes gives each its own.
    private func announced(_ decisions: [AccountNotificationDecision], nid: Int64) async throws -> String? {
        let since = raiser.clock.now.addingTimeInterval(-Self.announcementWindow)
        let mapped = Set(try await raised.raisedIdentifiers(account: account))
        var candidates: [String] = []
        for decision in decisions {
            // One an earlier push's poll held keeps the name it was matched under, however it was decided since.
            let held = heldPrefix + decision.serverID.rawValue
            if mapped.contains(held) {
                candidates.append(held)
            } else if let identifier = decision.decision.request?.identifier {
                candidates.append(identifier)
            } else if case .hold = decision.decision {
                candidates.append(held)
            } else if case .drop(.alreadyRaised) = decision.decision,
                let raised = try await raiser.policy.raisedRecord(account: account, serverID: decision.serverID),
                raised.raisedAt >= since, !notShown.contains(raised.requestIdentifier)
            {
                candidates.append(raised.requestIdentifier)
            }
        }
        return try await raised.claim(account: account, nid: nid, candidates: candidates)
    }

    /// Identifiers of the raised set that name no notification of their own: a digest summary's (it holds others
    /// too) and the dismissed.
    private var notShown: Set<String> {
        ["\(account)#digest", NotificationPolicyStore.dismissedIdentifier(account: account)]
    }

    /// What a `nid` mapped to a notification its poll held (quiet hours, a digest) stands for until it is raised.
    private var heldPrefix: String { "\(account)#held:" }

    /// The notifications to take down for `mapped` identifiers: a held one's is the request identifier it was
    /// raised under since (none when a digest summary holds it with others). One still held is, when
    /// `dismissingHeld`, recorded as dismissed instead, so it is never raised.
    private func shown(_ mapped: [String], dismissingHeld: Bool = false) async throws -> [String] {
        var identifiers: [String] = []
        for identifier in mapped {
            guard identifier.hasPrefix(heldPrefix) else {
                identifiers.append(identifier)
                continue
            }
            let serverID = ServerID(String(identifier.dropFirst(heldPrefix.count)))
            let policy = raiser.policy
            let raised =
                dismissingHeld
                ? try await policy.dismiss(account: account, serverID: serverID, at: raiser.clock.now)
                : try await policy.raisedRequestIdentifier(account: account, serverID: serverID)
            if let raised, !notShown.contains(raised), !identifiers.contains(raised) {
                identifiers.append(raised)
            }
        }
        return identifiers
    }

    /// Signs the account out: the raiser's ``MastodonNotificationRaiser/signOut(alsoWithdrawing:)`` (raised set,
    /// registrations, widget line) withdrawing every notification the `nid` map holds too — another app's
    /// (`<account>#nextcloud:<nid>`) and what the app recorded with ``recordRaised(nid:raisedIdentifier:)`` —, then
    /// the account's map is deleted. Sign a Nextcloud account out here rather than at the raiser alone.
    ///
    /// - Throws: A store error (the map is kept when the raiser's sign-out fails, so nothing is lost).
    public func signOut() async throws -> MastodonNotificationRaiser.SignOutReport {
        let mapped = try await shown(try await raised.raisedIdentifiers(account: account))
        let report = try await raiser.signOut(alsoWithdrawing: mapped)
        try await raised.forget(account: account)
        return report
    }

    /// Remembers that the app raised `raisedIdentifier` for another app's notification `nid`, so a later
    /// `delete` push withdraws it.
    ///
    /// - Throws: A store error.
    public func recordRaised(nid: Int64, raisedIdentifier: String) async throws {
        try await raised.record(account: account, nid: nid, raisedIdentifier: raisedIdentifier)
    }
}
