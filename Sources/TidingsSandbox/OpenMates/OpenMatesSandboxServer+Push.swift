import TidingsCore
import TidingsOpenMates

extension OpenMatesSandboxServer {
    /// Pushes one event of any type and payload to every open connection, as the real server may at any time:
    /// an `error`, an `initial_sync_error`, an `offline_sync_complete`, a `ping`, or an event the sandbox's own
    /// semantics never make. Nothing of the server's data changes; the frame is listed in ``sent``.
    ///
    /// - Returns: How many connections it was sent to.
    @discardableResult
    public func push(_ type: String, _ payload: [String: JSONValue] = [:]) -> Int {
        let targets = sessions.keys.sorted()
        for session in targets { emit(session, type, payload) }
        return targets.count
    }
}
