import Foundation
import TidingsCore

/// The live fault switches of one running sandbox: tests flip them while servers read them.
///
/// Guarantees: every read-and-spend (``take(method:path:)``) is atomic, so a rule with `times: 1` fires
/// for exactly one request even when requests race.
public final class SandboxFaultSwitch: Sendable {
    private let state: LockedState<SandboxFaults>

    /// Switches starting as `faults`.
    public init(_ faults: SandboxFaults = SandboxFaults()) { state = LockedState(faults) }

    /// The current rules.
    public var faults: SandboxFaults { state.withLock { $0 } }

    /// Adds a rule (see ``SandboxFaults/add(_:on:times:)``).
    public func add(_ action: SandboxFaults.Action, on match: SandboxFaults.Match = .any, times: Int? = nil) {
        state.withLock { $0.add(action, on: match, times: times) }
    }

    /// Removes every rule.
    public func clear() { state.withLock { $0.rules.removeAll() } }

    /// The action for a request, spending one use of its rule.
    public func take(method: String, path: String) -> SandboxFaults.Action? {
        state.withLock { $0.take(method: method, path: path) }
    }

    /// The action for a Socket.IO event, spending one use of its rule.
    public func take(event: String) -> SandboxFaults.Action? { state.withLock { $0.take(event: event) } }
}
