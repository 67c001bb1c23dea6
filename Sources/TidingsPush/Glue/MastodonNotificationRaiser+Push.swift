import Foundation
import TidingsCore
import TidingsMastodon

/// What became of one incoming push.
public enum PushHandling: Hashable, Sendable {
    /// Wake mode: the account's notifications were polled; these are the decisions of that poll.
    case woke([AccountNotificationDecision])
    /// Wake mode with the app's own wake (a scheduler tick): raising happens when that poll stores.
    case wakeRequested
    /// Content mode: the payload was decided on.
    case decided(AccountNotificationDecision)
    /// Content mode, the payload unusable (`reason`): the generic notification on Apple, nil elsewhere.
    case unusable(reason: String, generic: NotificationRequest?)
}

extension MastodonNotificationRaiser {
    /// Handles one push addressed to this account, by the account's mode.
    ///
    /// Wake: nothing is decrypted; the account's notifications are polled now (or the app's `wake` runs) and
    /// what is raised is decided by that poll. Content: the body is decrypted with the account's keys, the
    /// payload's `title`, `body`, `icon` and `notification_id` become a candidate and the same decision runs,
    /// recording the ID so the next poll does not raise it again; a favourite, boost or follow joins its v2
    /// group as ``PushGroupKey`` derives it, so a group is shown once and updated in place; a body that does not decrypt or a payload
    /// that names nothing usable gives the generic notification on Apple and nothing elsewhere.
    ///
    /// - Throws: `MastodonError` from a wake poll, or a store error. A bad body is not an error: it is
    ///   ``PushHandling/unusable(reason:generic:)``.
    public func handle(_ push: IncomingWebPush) async throws -> PushHandling {
        switch configuration.mode {
        case .wake:
            if let wake {
                await wake()
                return .wakeRequested
            }
            return .woke(try await pollAndRaise())
        case .content:
            let payload: JSONValue
            do {
                guard let keys else { return try await unusable("no push keys") }
                let plaintext = try WebPushDecryptor(keys: try await keys()).decrypt(
                    push.body, contentEncoding: push.contentEncoding, cryptoKey: push.cryptoKey,
                    encryption: push.encryption)
                payload = try JSONValue(parsing: Data(plaintext))
            } catch let error as any TidingsError {
                return try await unusable(error.shortDescription)
            } catch {
                return try await unusable("\(type(of: error))")
            }
            guard var candidate = NotificationCandidate(pushPayload: payload, account: account) else {
                return try await unusable("payload without a notification the policy raises")
            }
            // The payload names no v2 group: derive it as Mastodon does, so a group is shown once (PushGroupKey).
            candidate.groupKey = try await pushGroupKey(candidate.category, body: payload["body"]?.stringValue ?? "")
            let decision = try await decide(candidate)
            // A payload names no author: a mention the digest holds may be from a followed account, which the
            // setting lets through at once, so the poll (which names the author) decides it now.
            if case .hold(_, .digest) = decision.decision, candidate.category.isMention, asksWhomTheReaderFollows {
                return .woke(try await pollAndRaise())
            }
            await updateWidget()
            return .decided(decision)
        }
    }

    /// The generic notification (Apple), recorded as shown so that the next raise and sign-out withdraw it.
    private func unusable(_ reason: String) async throws -> PushHandling {
        let generic = NotificationContentBuilder.generic(account: account, context: configuration.content)
        if let generic {
            try await policy.recordShown(account: account, requestIdentifier: generic.identifier)
            broadcaster.publish(.generic(generic))
        }
        return .unusable(reason: reason, generic: generic)
    }

    // MARK: Sign-out

    /// What a sign-out did.
    public struct SignOutReport: Sendable {
        /// What the app must withdraw and remove (also sent as ``AccountNotificationEvent/withdraw(_:)``).
        public var withdrawal: NotificationPolicyStore.SignOut
        /// The registrations that could not be withdrawn at their server, with the reason (no secret); their
        /// local state is deleted all the same.
        public var failures: [String: String]
    }

    /// Signs the account out of notifications: stops following polls, deletes the raised set, groups and
    /// digest state, tells the app to withdraw every raised notification (the generic one too, when shown) and
    /// remove the account's channel group, withdraws every push registration (Mastodon
    /// `DELETE /api/v1/push/subscription` and its keys, a proxy's or distributor's), removes the account's widget
    /// line and signals the sign-out.
    ///
    /// - Parameter extra: Request identifiers shown outside the policy (another Nextcloud app's, from
    ///   ``NextcloudPushHandler/signOut()``), withdrawn with the rest.
    /// - Throws: A store error when the raised set cannot be deleted (nothing is withdrawn then).
    public func signOut(alsoWithdrawing extra: [String] = []) async throws -> SignOutReport {
        stopFollowingPolls()
        var withdrawal = try await policy.signOut(account: account)
        withdrawal.withdrawRequestIdentifiers = Array(Set(withdrawal.withdrawRequestIdentifiers + extra)).sorted()
        broadcaster.publish(.withdraw(withdrawal))
        var failures: [String: String] = [:]
        for registration in registrations {
            do {
                try await registration.withdrawRegistration()
            } catch {
                failures[registration.registrationName] =
                    (error as? any TidingsError)?.description ?? "\(type(of: error))"
            }
        }
        if let board { try? board.remove(account: account, at: clock.now) }
        return SignOutReport(withdrawal: withdrawal, failures: failures)
    }
}
