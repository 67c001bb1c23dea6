import Foundation
import TidingsCore
import TidingsNet

/// The server side of Engine.IO 4: long-polling, the upgrade to WebSocket, and WebSocket-only sessions,
/// built on TidingsNet's packet and payload codecs (the same ones the client uses).
///
/// Guarantees: a handshake answers `sid`, `upgrades: ["websocket"]`, `pingInterval`, `pingTimeout`
/// and `maxPayload`; an unknown `sid` gets 400 with Engine.IO's `Session ID unknown`; a POST over
/// `maxPayload` gets 413; each new session is handed to the session handler exactly once.
public final class SandboxEngineIOServer: Sendable {
    /// Protocol timing and limits.
    public struct Configuration: Sendable {
        /// How often the server pings.
        public var pingInterval: Duration
        /// How long it waits for the pong before closing the session.
        public var pingTimeout: Duration
        /// The largest POST body it takes.
        public var maxPayload: Int
        /// The clock of the heartbeat and of the `delay` fault (a `TestClock` in tests).
        public var clock: any Clock<Duration>

        /// Engine.IO's defaults (25 s, 20 s, 1 MB) on the continuous clock.
        public init(
            pingInterval: Duration = .seconds(25), pingTimeout: Duration = .seconds(20), maxPayload: Int = 1_000_000,
            clock: any Clock<Duration> = ContinuousClock()
        ) {
            self.pingInterval = pingInterval
            self.pingTimeout = pingTimeout
            self.maxPayload = maxPayload
            self.clock = clock
        }
    }

    /// Runs one session, reading its ``SandboxEngineIOSession/messages``.
    public typealias SessionHandler = @Sendable (SandboxEngineIOSession) async -> Void

    private let configuration: Configuration
    private let onSession: SessionHandler
    private let sessions = LockedState<[String: SandboxEngineIOSession]>([:])

    /// A server handing each new session to `onSession`.
    public init(configuration: Configuration = Configuration(), onSession: @escaping SessionHandler) {
        self.configuration = configuration
        self.onSession = onSession
    }

    /// How many sessions are open.
    public var sessionCount: Int { sessions.withLock { $0.count } }

    /// Answers a polling request (`GET`/`POST` on the Engine.IO path).
    public func handle(_ request: SandboxHTTPRequest) async -> SandboxHTTPResponse {
        guard request.queryValue("EIO") == "4" else { return Self.error(5, "Unsupported protocol version") }
        guard request.queryValue("transport") == "polling" else { return Self.error(0, "Transport unknown") }
        guard let sid = request.queryValue("sid") else {
            guard request.method == "GET" else { return Self.error(2, "Bad handshake method") }
            let session = open()
            return Self.payload([EngineIOPacket(.open, .text(handshake(session.id)))])
        }
        guard let session = sessions.withLock({ $0[sid] }) else { return Self.error(1, "Session ID unknown") }
        switch request.method {
        case "GET":
            guard let packets = await session.poll() else { return Self.payload([EngineIOPacket(.close)]) }
            return Self.payload(packets)
        case "POST":
            guard request.body.count <= configuration.maxPayload else {
                return .text("payload too large", status: 413)
            }
            guard let packets = try? EngineIOPayload.decode(request.body, version: .v4, maximumPackets: 1_000) else {
                await session.abort()
                return Self.error(3, "Bad request")
            }
            for packet in packets { await session.receive(packet) }
            return .text("ok")
        default:
            return Self.error(2, "Bad request method")
        }
    }

    /// Serves a WebSocket: the upgrade of a polling session (`sid` given: probe, then `upgrade`) or a
    /// WebSocket-only session.
    public func handleWebSocket(_ request: SandboxHTTPRequest, _ socket: LoopbackWebSocketConnection) async {
        guard request.queryValue("EIO") == "4", request.queryValue("transport") == "websocket" else { return }
        var messages = socket.messages.makeAsyncIterator()
        let session: SandboxEngineIOSession
        if let sid = request.queryValue("sid") {
            guard let existing = sessions.withLock({ $0[sid] }) else { return }
            session = existing
            // A client that opens the socket and then says nothing must not hold it: the probe and the
            // upgrade have one heartbeat period to arrive.
            let clock = configuration.clock
            let limit = configuration.pingInterval + configuration.pingTimeout
            let deadline = Task {
                do { try await clock.sleep(for: limit) } catch { return }
                socket.abort()
            }
            defer { deadline.cancel() }
            // The probe: `2probe` answered `3probe`, then `5` moves the session over.
            guard case .text("2probe")? = try? await messages.next() else { return }
            guard (try? await socket.send(text: "3probe")) != nil else { return }
            await session.prepareUpgrade()
            guard case .text("5")? = try? await messages.next() else { return }
            deadline.cancel()
            await session.attach(socket)
        } else {
            session = open()
            await session.attach(socket)
            await session.sendPackets([EngineIOPacket(.open, .text(handshake(session.id)))])
        }
        do {
            while let message = try await messages.next() {
                let frame: EngineIOFrame =
                    switch message {
                    case .text(let text): .text(text)
                    case .binary(let bytes): .binary(bytes)
                    }
                guard let packet = try? EngineIOPacket.decode(frame, version: .v4) else { break }
                await session.receive(packet)
                if await session.isClosed { return }
            }
        } catch {}
        await session.abort()
    }

    private func open() -> SandboxEngineIOSession {
        let id = TidingsCrypto.SecureRandom.bytes(15).map { String(format: "%02x", $0) }.joined()
        let session = SandboxEngineIOSession(id: id) { [weak self] id in
            _ = self?.sessions.withLock { $0.removeValue(forKey: id) }
        }
        sessions.withLock { $0[id] = session }
        let onSession = self.onSession
        let configuration = self.configuration
        Task {
            await session.startHeartbeat(
                interval: configuration.pingInterval, timeout: configuration.pingTimeout, clock: configuration.clock)
            await onSession(session)
        }
        return session
    }

    private func handshake(_ sid: String) -> String {
        let interval = Self.milliseconds(configuration.pingInterval)
        let timeout = Self.milliseconds(configuration.pingTimeout)
        return #"{"sid":"\#(sid)","upgrades":["websocket"],"pingInterval":\#(interval),"#
            + #""pingTimeout":\#(timeout),"maxPayload":\#(configuration.maxPayload)}"#
    }

    private static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    private static func payload(_ packets: [EngineIOPacket]) -> SandboxHTTPResponse {
        SandboxHTTPResponse(
            status: 200, headers: ["Content-Type": "text/plain; charset=UTF-8"],
            body: Data(EngineIOPayload.encode(packets, version: .v4)))
    }

    private static func error(_ code: Int, _ message: String) -> SandboxHTTPResponse {
        SandboxHTTPResponse(
            status: 400, headers: ["Content-Type": "application/json"],
            body: Data(#"{"code":\#(code),"message":"\#(message)"}"#.utf8))
    }
}
