/// An offline action that failed for good, kept durably until the app dismisses it, so the reason reaches the
/// user even when nobody was listening when ``OpenMatesClient/Change/actionFailed(_:_:)`` was published, or the
/// app was relaunched since.
public struct OpenMatesFailedAction: Sendable, Hashable {
    /// The action as it was queued, with its tries; its `id` (the queue position) identifies this record.
    public var action: OpenMatesPendingAction
    /// Why it failed, for the UI (the same text as the published error's `detail`; never secrets).
    public var reason: String

    /// Creates a record.
    public init(action: OpenMatesPendingAction, reason: String) {
        self.action = action
        self.reason = reason
    }

    /// The record's ID, to pass to ``OpenMatesClient/dismissFailedAction(id:)``.
    public var id: Int64 { action.id }

    /// The error ``OpenMatesClient/Change/actionFailed(_:_:)`` carried (``OpenMatesError/actionFailed``).
    public var error: OpenMatesError {
        OpenMatesError(.actionFailed, operation: action.kind.rawValue, detail: reason, chatIDs: [action.chatID])
    }
}
