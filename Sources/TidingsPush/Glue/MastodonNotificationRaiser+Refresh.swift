import Foundation
import TidingsCore
import TidingsMastodon

/// What the background paths (``MastodonNotificationRaiser/pollAndRaise()``,
/// ``MastodonNotificationRaiser/releaseHeld()``) ask the server before they decide. The local notifications
/// marker only learns the server's at `syncMarkers()` (launch, foreground), so a background run asks for it
/// first: a notification read on another device is then not raised. Nothing here waits on the account's rate
/// budget: a request that would have to wait (a `Retry-After`, a backoff, an empty bucket, or the server's
/// last remaining requests, kept for the person) is not sent, and the run decides over what is stored.
extension MastodonNotificationRaiser {
    /// The server's remaining requests kept for the person, as the poll scheduler keeps them.
    static let personReserve = 10

    /// Learns the server's markers (`engine.syncMarkers()`: one GET, merged as the maximum; a POST only when this
    /// device read beyond the server and had not said so yet). Best effort: a failure or a budget that would make
    /// it wait leaves the local marker.
    ///
    /// - Throws: `CancellationError` only.
    func learnServerMarker() async throws {
        guard await requestGoesNow() else { return }
        do {
            try await engine.syncMarkers()
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            // Offline or refused: the local marker still suppresses what this device read.
        }
    }

    /// Before a background job decides again: the server's marker, then what the server lists now, so that a
    /// push content mode decided from its payload alone (never stored by the engine) is among what is
    /// released. Best effort: a failed or budget-held request leaves the job to decide over what is stored.
    ///
    /// - Throws: `CancellationError` only.
    func refreshBeforeRelease() async throws {
        try await learnServerMarker()
        guard await requestGoesNow() else { return }
        do {
            try await engine.pollNotifications()
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            // Offline or refused: what the engine stored is still decided on; the next job or poll catches up.
        }
    }

    /// Whether a request of the account would go at once on its rate budget (always, without a budget).
    func requestGoesNow() async -> Bool {
        let client = engine.client
        guard let budget = client.rateBudget, let host = client.server.host else { return true }
        // Mastodon meters the markers and notifications endpoints in one family; either path gives it.
        let status = await budget.status(
            host: host, account: client.accountKey, family: .mastodon(method: "GET", path: "/api/v1/markers"))
        if let remaining = status.serverRemaining, remaining <= Self.personReserve { return false }
        return status.blockedFor == .zero && status.availableTokens >= 1
    }
}
