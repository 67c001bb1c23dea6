import Foundation
import TidingsSandboxKit
import TidingsYpChat

/// A YpChat server for tests, previews and `tidings sandbox ypchat`, on TidingsSandboxKit.
///
/// The REST side (``YpChatSandboxState`` has the semantics) answers in process through ``http``'s
/// `handle(_:)` and on 127.0.0.1 through ``serve(port:)``; faults and the request log are the kit's
/// (``faults``, ``log``), so a test breaks it the same way as every other sandbox.
public final class YpChatSandboxServer: Sendable {
    /// The express session cookie's name.
    public static let cookieName = YpChatRESTClient.sessionCookieName

    /// The server's state (sessions, feedback, uploads).
    public let state: YpChatSandboxState
    /// The HTTP server (REST routes).
    public let http: SandboxHTTPServer
    /// The fault switches every request passes.
    public var faults: SandboxFaultSwitch { http.faults }
    /// Every request served.
    public var log: SandboxRequestLog { http.log }

    /// A server over `state`; `clock` times delay faults (a `TestClock` in tests).
    public init(
        state: YpChatSandboxState = YpChatSandboxState(), faults: SandboxFaultSwitch = SandboxFaultSwitch(),
        log: SandboxRequestLog = SandboxRequestLog(), clock: any Clock<Duration> = ContinuousClock()
    ) {
        self.state = state
        http = SandboxHTTPServer(router: Self.restRouter(state: state), faults: faults, log: log, clock: clock)
    }

    /// Serves on 127.0.0.1 at `port` (0: a free one) until the listener is stopped.
    ///
    /// - Throws: `TransportError` when the port cannot be bound.
    public func serve(port: Int = 0) throws -> SandboxHTTPListener { try http.serve(port: port) }
}
