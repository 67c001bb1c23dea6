import Foundation
import TidingsCore
import TidingsNet

/// An HTTP/1.1 sandbox server: one handler, reachable in process (``handle(_:)``) and behind real
/// loopback sockets (``serve(host:port:)``), with the kit's fault switches and request log applied to both.
///
/// Guarantees: a fault switch changes the answer the same way on both paths (on sockets, drops and
/// closes really cut the connection); every request ends in exactly one log entry; a handler never sees
/// a request the server refused as malformed.
///
/// For example:
///
/// ```swift
/// var router = SandboxHTTPRouter()
/// router.add("GET", "/api/v1/ping") { _ in .json(["pong": true]) }
/// let server = SandboxHTTPServer(router: router)
/// let listener = try server.serve()          // http://127.0.0.1:<port>/
/// let inProcess = await server.handle(SandboxHTTPRequest(method: "GET", target: "/api/v1/ping"))
/// ```
public final class SandboxHTTPServer: Sendable {
    /// Answers one request.
    public typealias Handler = @Sendable (SandboxHTTPRequest) async -> SandboxHTTPResponse
    /// Serves one WebSocket upgraded on the same port (the connection closes when it returns).
    public typealias WebSocketHandler = @Sendable (SandboxHTTPRequest, LoopbackWebSocketConnection) async -> Void

    /// The fault switches applied to every request.
    public let faults: SandboxFaultSwitch
    /// Every request served, with byte counts.
    public let log: SandboxRequestLog
    /// Serves WebSocket upgrades on the same port (nil: upgrades are answered like any request).
    let webSocket: WebSocketHandler?
    private let inProcessTasks = TaskBag()
    private let handler: Handler
    let clock: any Clock<Duration>

    /// A server answering with `handler`; `clock` times the `delay` fault (a `TestClock` in tests);
    /// `webSocket`, when given, serves `Upgrade: websocket` requests on the same port (sockets only).
    public init(
        faults: SandboxFaultSwitch = SandboxFaultSwitch(), log: SandboxRequestLog = SandboxRequestLog(),
        clock: any Clock<Duration> = ContinuousClock(), webSocket: WebSocketHandler? = nil,
        handler: @escaping Handler
    ) {
        self.faults = faults
        self.log = log
        self.clock = clock
        self.webSocket = webSocket
        self.handler = handler
    }

    /// A server answering with `router`.
    public convenience init(
        router: SandboxHTTPRouter, faults: SandboxFaultSwitch = SandboxFaultSwitch(),
        log: SandboxRequestLog = SandboxRequestLog(), clock: any Clock<Duration> = ContinuousClock()
    ) {
        self.init(faults: faults, log: log, clock: clock) { await router.route($0) }
    }

    /// Answers `request` in process, with faults applied, and logs it (byte counts are body sizes).
    ///
    /// A `neverAnswer` fault suspends until the calling task is cancelled, then returns status 0.
    public func handle(_ request: SandboxHTTPRequest) async -> SandboxHTTPResponse {
        let (response, fault) = await respond(to: request)
        let status = response.connectionFault == nil ? response.status : 0
        var bytesOut = response.payload.count
        if case .dropAfterBodyBytes(let count) = response.connectionFault { bytesOut = count }
        if response.connectionFault == .closeWithoutAnswer { bytesOut = 0 }
        log.record(
            .init(
                method: request.method, path: request.path, status: status, bytesIn: request.body.count,
                bytesOut: bytesOut, fault: fault?.description))
        return response
    }

    /// Connects a WebSocket in process to the ``WebSocketHandler`` (the same faults and log as an
    /// upgrade on a socket, whole messages in memory).
    ///
    /// - Throws: `TidingsNet/WebSocketError` `handshakeFailed` (404 when the server has no WebSocket
    ///   handler, or a fault's status).
    public func connectWebSocketInProcess(target: String, headers: HTTPHeaders = HTTPHeaders()) async throws
        -> SandboxInMemoryWebSocket
    {
        let request = SandboxHTTPRequest(method: "GET", target: target, headers: headers)
        guard let webSocket else {
            throw WebSocketError(.handshakeFailed, detail: "no WebSocket here", httpStatus: 404)
        }
        return try await InMemoryUpgrade.connect(
            path: request.path, faults: faults, log: log, clock: clock, tasks: inProcessTasks, authorize: { true },
            handler: { await webSocket(request, $0) })
    }

    /// Closes every in-process WebSocket's handler (``connectWebSocketInProcess(target:headers:)``).
    public func closeInProcessConnections() { inProcessTasks.cancelAll() }

    /// Serves the same handler on `host` (loopback only) and `port` (0: a free one) until the returned
    /// listener is stopped.
    ///
    /// - Throws: `TidingsNet/TransportError` when the port cannot be bound.
    public func serve(host: String = "127.0.0.1", port: Int = 0) throws -> SandboxHTTPListener {
        try SandboxHTTPListener(server: self, host: host, port: port)
    }

    /// The handler's answer with the fault switches applied, and the fault that applied.
    func respond(to request: SandboxHTTPRequest) async -> (SandboxHTTPResponse, SandboxFaults.Action?) {
        guard let fault = faults.take(method: request.method, path: request.path) else {
            return (await handler(request), nil)
        }
        switch fault {
        case .status(let status):
            return (.text("sandbox fault: status \(status)", status: status), fault)
        case .tooManyRequests(let seconds):
            var response = SandboxHTTPResponse.text("sandbox fault: too many requests", status: 429)
            if let seconds { response.headers.add(name: "Retry-After", value: String(seconds)) }
            return (response, fault)
        case .delay(let duration):
            do { try await clock.sleep(for: duration) } catch {
                var cancelled = SandboxHTTPResponse(status: 0)
                cancelled.connectionFault = .closeWithoutAnswer
                return (cancelled, fault)
            }
            return (await handler(request), fault)
        case .dropMidResponse:
            var response = await handler(request)
            response.connectionFault = .dropAfterBodyBytes(response.payload.count / 2)
            return (response, fault)
        case .neverAnswer:
            await waitUntilCancelled()
            var response = SandboxHTTPResponse(status: 0)
            response.connectionFault = .closeWithoutAnswer
            return (response, fault)
        case .close:
            var response = SandboxHTTPResponse(status: 0)
            response.connectionFault = .closeWithoutAnswer
            return (response, fault)
        case .malformedBody:
            var response = await handler(request)
            response.chunks = nil
            response.body = Data("{\"sandbox\": malformed".utf8)
            return (response, fault)
        }
    }
}
