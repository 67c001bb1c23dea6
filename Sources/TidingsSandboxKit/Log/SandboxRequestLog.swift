import Foundation
import TidingsCore

/// What a sandbox served, request by request, with byte counts: what tests assert on and the demo prints.
///
/// Guarantees: an entry is recorded before its response leaves the server, so a client that has read a
/// response finds its entry; byte counts are what the server received and sends (head and body) on
/// sockets, and the body sizes in process; no query or header values are recorded, so tokens and
/// cookies never reach the log.
public final class SandboxRequestLog: Sendable {
    /// One served request.
    public struct Entry: Sendable, Equatable, CustomStringConvertible {
        /// The method (`GET`), or `WS` for a WebSocket upgrade.
        public var method: String
        /// The path without the query (the query may hold secrets).
        public var path: String
        /// The status answered; 0 when the connection was dropped or never answered.
        public var status: Int
        /// Bytes received for the request.
        public var bytesIn: Int
        /// Bytes sent for the response.
        public var bytesOut: Int
        /// The fault applied, if any (``SandboxFaults/Action/description``).
        public var fault: String?

        /// `GET /api/v1/x → 200 (120 B in, 512 B out)`.
        public var description: String {
            "\(method) \(path) → \(status) (\(bytesIn) B in, \(bytesOut) B out)" + (fault.map { " [\($0)]" } ?? "")
        }
    }

    private let state = LockedState<[Entry]>([])
    private let observer: (@Sendable (Entry) -> Void)?

    /// An empty log; `observer`, when given, sees each entry as it is recorded (the CLI prints them).
    public init(observer: (@Sendable (Entry) -> Void)? = nil) { self.observer = observer }

    /// Every entry so far, oldest first.
    public var entries: [Entry] { state.withLock { $0 } }

    /// Appends an entry.
    public func record(_ entry: Entry) {
        state.withLock { $0.append(entry) }
        observer?(entry)
    }

    /// Forgets every entry.
    public func clear() { state.withLock { $0.removeAll() } }
}
