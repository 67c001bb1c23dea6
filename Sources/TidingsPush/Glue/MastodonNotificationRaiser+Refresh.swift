import Foundation
import TidingsCore
import TidingsMastodon

extension MastodonNotificationRaiser {
    /// Before a background job decides again: what the server lists now, so that a push content mode decided from
    /// its payload alone (never stored by the engine) is among what is released. Best effort: a failed poll leaves
    /// the job to decide over what is stored.
    ///
    /// - Throws: `CancellationError` only.
    func refreshBeforeRelease() async throws {
        do {
            try await engine.pollNotifications()
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            // Offline or refused: what the engine stored is still decided on; the next job or poll catches up.
        }
    }
}
