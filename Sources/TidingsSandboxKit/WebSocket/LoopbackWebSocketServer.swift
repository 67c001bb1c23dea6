import Foundation
import TidingsCore
import TidingsNet

/// A minimal RFC 6455 WebSocket *server* on 127.0.0.1, for sandbox backends.
///
/// It accepts the HTTP/1.1 upgrade (checking `Upgrade`, `Sec-WebSocket-Version: 13` and answering
/// `Sec-WebSocket-Accept`), lets ``Handler`` accept or refuse each request by its headers, sends
/// unmasked frames, requires masked client frames, answers pings, echoes close frames, and
/// reassembles fragmented messages. It binds loopback only and is meant for tests, the demo and the
/// CLI, not for the internet. The kit's fault switches apply to upgrade requests by path (`status`
/// and `tooManyRequests` refuse the upgrade, `neverAnswer` holds it, `close` accepts and closes with the
/// code, `dropMidResponse` cuts the socket after the 101, `delay` waits first), and every upgrade ends
/// in one request-log entry (method `WS`).
///
/// For example:
///
/// ```swift
/// let server = try LoopbackWebSocketServer { request, connection in
///     for try await message in connection.messages { try await connection.send(text: "echo") }
/// }
/// print(server.url)   // ws://127.0.0.1:54321/
/// ```
public final class LoopbackWebSocketServer: Sendable {
    /// The request line and headers of one upgrade request.
    public struct UpgradeRequest: Sendable {
        /// The request target (`/ws?x=1`).
        public var target: String
        /// Header values by lower-cased name.
        public var headers: [String: String]
    }

    /// Decides whether to accept an upgrade (false refuses it with the server's refusal status, 401 unless
    /// given), before the 101 is sent.
    public typealias Authorizer = @Sendable (UpgradeRequest) async -> Bool
    /// Serves one accepted connection; the connection closes when it returns.
    public typealias Handler = @Sendable (UpgradeRequest, LoopbackWebSocketConnection) async -> Void

    /// The bound port.
    public let port: Int
    /// `ws://127.0.0.1:<port>/`.
    public var url: URL { URL(string: "ws://127.0.0.1:\(port)/") ?? URL(fileURLWithPath: "/") }

    /// The fault switches applied to upgrade requests.
    public let faults: SandboxFaultSwitch
    /// Every upgrade request, with the bytes of its handshake.
    public let log: SandboxRequestLog

    private let listener: TCPListener
    private let acceptTask: Task<Void, Never>
    private let authorize: Authorizer
    private let handler: Handler
    private let clock: any Clock<Duration>
    private let refusal: Int
    private let inProcessTasks = TaskBag()

    /// Binds `port` on loopback (0: a free one) and starts accepting.
    ///
    /// With `http`, a request on the port that is not a WebSocket upgrade is served by that server (its own
    /// faults and log), as a server answering HTTP and WebSocket on one origin does; without it such a request
    /// gets 400. `refusal` is the status of an upgrade `authorize` refuses (401; a server may answer 403).
    ///
    /// - Throws: `TransportError` when the port cannot be bound.
    public init(
        port: Int = 0, faults: SandboxFaultSwitch = SandboxFaultSwitch(), log: SandboxRequestLog = SandboxRequestLog(),
        clock: any Clock<Duration> = ContinuousClock(), http: SandboxHTTPServer? = nil, refusal: Int = 401,
        authorize: @escaping Authorizer = { _ in true }, handler: @escaping Handler
    ) throws {
        let listener = try TCPListener.bind(host: "127.0.0.1", port: port)
        self.listener = listener
        self.port = listener.port
        self.faults = faults
        self.log = log
        self.authorize = authorize
        self.handler = handler
        self.clock = clock
        self.refusal = refusal
        let options = ServeOptions(faults: faults, log: log, clock: clock, http: http, refusal: refusal)
        acceptTask = Task {
            await withDiscardingTaskGroup { group in
                while !Task.isCancelled {
                    guard let connection = try? await listener.accept() else { break }
                    group.addTask {
                        await Self.serve(connection, options, authorize: authorize, handler: handler)
                    }
                }
                group.cancelAll()
            }
        }
    }

    /// Stops accepting and cancels every connection's handler, in-process ones included.
    public func stop() {
        listener.close()
        acceptTask.cancel()
        inProcessTasks.cancelAll()
    }

    /// Connects in process: the same faults, authorization, log and handler as over a socket, with
    /// whole messages passed in memory (no handshake bytes, no framing; the log counts 0 bytes).
    ///
    /// - Parameters:
    ///   - target: the request target (`/kecalek`).
    ///   - headers: request headers by name (`Authorization`); matched case-insensitively.
    /// - Throws: `TidingsNet/WebSocketError` `handshakeFailed` with the status a socket client sees.
    public func connectInProcess(target: String = "/", headers: [String: String] = [:]) async throws
        -> SandboxInMemoryWebSocket
    {
        let request = UpgradeRequest(
            target: target,
            headers: Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 }))
        let handler = self.handler
        let refusal = self.refusal
        return try await InMemoryUpgrade.connect(
            path: String(target.prefix { $0 != "?" }), faults: faults, log: log, clock: clock, tasks: inProcessTasks,
            refusal: refusal, authorize: { await authorize(request) }, handler: { await handler(request, $0) })
    }

    deinit { stop() }

    /// What every connection is served with.
    private struct ServeOptions: Sendable {
        let faults: SandboxFaultSwitch
        let log: SandboxRequestLog
        let clock: any Clock<Duration>
        let http: SandboxHTTPServer?
        let refusal: Int
    }

    private static func serve(
        _ connection: TCPConnection, _ options: ServeOptions, authorize: Authorizer, handler: Handler
    ) async {
        let (faults, log, clock) = (options.faults, options.log, options.clock)
        defer { connection.close() }
        var buffer: [UInt8] = []
        let terminator: [UInt8] = Array("\r\n\r\n".utf8)
        var headerEnd: Int?
        while headerEnd == nil {
            guard buffer.count < 64 * 1024,
                let chunk = try? await withDeadline(SandboxHTTPListener.idleTimeout, { try await connection.read() }),
                !chunk.isEmpty
            else { return }
            buffer += chunk
            headerEnd = buffer.firstRange(of: terminator)?.upperBound
        }
        guard let end = headerEnd else { return }
        let head = String(decoding: buffer[..<end], as: UTF8.self)
        let leftover = Array(buffer[end...])
        let lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.first?.split(separator: " ") ?? []
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            headers[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let target = requestLine.count >= 2 ? String(requestLine[1]) : "?"
        let path = String(target.prefix { $0 != "?" })
        func refuse(_ status: Int, fault: SandboxFaults.Action? = nil, extra: String = "") async {
            let reply = "HTTP/1.1 \(status) \(SandboxHTTPResponse.reason(status))\r\n\(extra)Content-Length: 0\r\n\r\n"
            // Logged before the reply leaves, so whoever reads the reply finds the entry.
            log.record(
                .init(
                    method: "WS", path: path, status: status, bytesIn: end, bytesOut: reply.utf8.count,
                    fault: fault?.description))
            try? await connection.write(Array(reply.utf8))
        }
        if let http = options.http, headers["upgrade"]?.lowercased() != "websocket" {
            await SandboxHTTPListener.serve(connection, server: http, initial: buffer)
            return
        }
        guard requestLine.count >= 2, requestLine[0] == "GET",
            headers["upgrade"]?.lowercased() == "websocket", headers["sec-websocket-version"] == "13",
            let key = headers["sec-websocket-key"]
        else {
            await refuse(400)
            return
        }
        let request = UpgradeRequest(target: target, headers: headers)
        let fault = faults.take(method: "GET", path: path)
        switch fault {
        case .status(let status):
            await refuse(status, fault: fault)
            return
        case .tooManyRequests(let seconds):
            await refuse(429, fault: fault, extra: seconds.map { "Retry-After: \($0)\r\n" } ?? "")
            return
        case .neverAnswer:
            await waitUntilCancelled()
            log.record(.init(method: "WS", path: path, status: 0, bytesIn: end, bytesOut: 0, fault: fault?.description))
            return
        case .delay(let duration):
            try? await clock.sleep(for: duration)
        default:
            break
        }
        guard await authorize(request) else {
            await refuse(options.refusal)
            return
        }
        let accept = WebSocketServerHandshake.acceptValue(for: key)
        let response =
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: \(accept)\r\n\r\n"
        log.record(
            .init(
                method: "WS", path: path, status: 101, bytesIn: end, bytesOut: response.utf8.count,
                fault: fault?.description))
        do { try await connection.write(Array(response.utf8)) } catch { return }

        let socket = LoopbackWebSocketConnection(connection)
        switch fault {
        case .close(let code):
            await socket.close(code: WebSocketCloseCode(rawValue: code))
            return
        case .dropMidResponse, .malformedBody:
            // A connection that dies right after the upgrade (malformed: a frame no client accepts).
            if fault == .malformedBody { try? await connection.write([0x8F, 0x00]) }
            socket.abort()
            return
        default:
            break
        }
        let reader = Task { await socket.readLoop(initial: leftover) }
        await handler(request, socket)
        await socket.close()
        reader.cancel()
    }
}
