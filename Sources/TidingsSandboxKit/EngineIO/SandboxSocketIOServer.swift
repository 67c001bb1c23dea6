import Foundation
import TidingsCore
import TidingsNet

/// A Socket.IO 5 sandbox server: namespaces with auth, events with acks both ways, binary attachments,
/// over the kit's Engine.IO server (polling, upgrade, WebSocket) and HTTP server (in process for
/// polling, or on loopback with ``serve(port:)``), with the kit's fault switches matched by event name.
///
/// Guarantees: a connect to an unknown namespace, or one its `authorize` refuses, gets a connect error
/// and no handler runs; an event asking for an ack gets exactly one (the handler's result) unless a
/// fault says otherwise; every event ends in one request-log entry (method `EVENT`, path `<ns> <event>`);
/// every accepted connect is followed by exactly one `onDisconnect` for that socket, whether the client
/// sent a disconnect packet or its connection simply ended. A session's handlers run one at a time in
/// the order its events arrived, after the socket's `onConnect` and before its `onDisconnect` (as
/// python-socketio with `async_handlers=False`); acks from the client are read meanwhile, and an event
/// under a `delay` fault is answered on its own so it holds no later event.
///
/// For example:
///
/// ```swift
/// var chat = SandboxSocketIOServer.Namespace()
/// chat.events["echo"] = { _, arguments in arguments }
/// let server = SandboxSocketIOServer(namespaces: ["/": chat])
/// let listener = try server.serve()   // http://127.0.0.1:<port>/socket.io/
/// ```
public final class SandboxSocketIOServer: Sendable {
    /// Answers one event; the result is the ack's arguments when the client asked for an ack.
    public typealias EventHandler = @Sendable (SandboxSocketIOSocket, [JSONValue]) async -> [JSONValue]
    /// Runs when a client connects to a namespace.
    public typealias ConnectHandler = @Sendable (SandboxSocketIOSocket) async -> Void

    /// What one namespace does.
    public struct Namespace: Sendable {
        /// Decides from the connect packet's auth payload whether the client may connect.
        public var authorize: @Sendable (JSONValue?) -> Bool = { _ in true }
        /// Runs after each accepted connect.
        public var onConnect: ConnectHandler?
        /// Runs once for each accepted socket when it goes away: a disconnect packet from the client, or
        /// the Engine.IO session ending (closed, a missed heartbeat, a dropped connection). A server
        /// tracking who is online needs this, since a client that vanished sends nothing.
        public var onDisconnect: ConnectHandler?
        /// Handlers by event name; events without one are acked with no arguments.
        public var events: [String: EventHandler] = [:]

        /// A namespace that accepts everyone and handles no events yet.
        public init() {}
    }

    /// The HTTP server carrying polling and the WebSocket upgrade (its faults apply to those requests).
    public let http: SandboxHTTPServer
    /// The Engine.IO layer.
    public let engine: SandboxEngineIOServer
    /// The fault switches (events match ``SandboxFaults/Match/event(_:)``; paths match the transport).
    public var faults: SandboxFaultSwitch { http.faults }
    /// Requests and events served.
    public var log: SandboxRequestLog { http.log }

    /// A server with `namespaces` (keys `/`, `/chat`) under `path`.
    public init(
        namespaces: [String: Namespace], path: String = "/socket.io/",
        configuration: SandboxEngineIOServer.Configuration = SandboxEngineIOServer.Configuration(),
        faults: SandboxFaultSwitch = SandboxFaultSwitch(), log: SandboxRequestLog = SandboxRequestLog()
    ) {
        let engine = SandboxEngineIOServer(configuration: configuration) { session in
            await SocketIOSessionRunner(
                namespaces: namespaces, faults: faults, log: log, clock: configuration.clock, session: session
            ).run()
        }
        self.engine = engine
        let prefix = path.hasSuffix("/") ? path : path + "/"
        http = SandboxHTTPServer(
            faults: faults, log: log, clock: configuration.clock,
            webSocket: { request, socket in
                guard (request.path + "/").hasPrefix(prefix) else { return }
                await engine.handleWebSocket(request, socket)
            },
            handler: { request in
                guard (request.path + "/").hasPrefix(prefix) else { return .text("not found", status: 404) }
                return await engine.handle(request)
            })
    }

    /// Serves on loopback; clients connect to `http://127.0.0.1:<port>/`.
    ///
    /// - Throws: `TidingsNet/TransportError` when the port cannot be bound.
    public func serve(port: Int = 0) throws -> SandboxHTTPListener { try http.serve(port: port) }
}

/// Reads one Engine.IO session's messages as Socket.IO packets and dispatches them.
private struct SocketIOSessionRunner: Sendable {
    let namespaces: [String: SandboxSocketIOServer.Namespace]
    let faults: SandboxFaultSwitch
    let log: SandboxRequestLog
    let clock: any Clock<Duration>
    let session: SandboxEngineIOSession

    /// Handlers run one after another in arrival order, as a Socket.IO server starts them: two
    /// messages sent back to back are stored in the order they were sent. Acks are read meanwhile,
    /// so a handler waiting for the client's ack gets it.
    func run() async {
        let (jobs, queue) = AsyncStream.makeStream(of: Job.self)
        let worker = Task {
            for await job in jobs { await job() }
        }
        var sockets: [String: Connected] = [:]
        await readPackets(into: &sockets, queue: queue)
        for connected in sockets.values { leave(connected, queue: queue) }
        queue.finish()
        await worker.value
    }

    typealias Job = @Sendable () async -> Void

    /// An accepted socket and its `onConnect` run, which its `onDisconnect` waits for (so a server
    /// never hears of a socket leaving before it heard of it arriving).
    struct Connected {
        let socket: SandboxSocketIOSocket
        let onConnect: Task<Void, Never>?
    }

    /// Dispatches the session's packets until it ends; `sockets` holds the namespaces still connected.
    private func readPackets(into sockets: inout [String: Connected], queue: AsyncStream<Job>.Continuation) async {
        var assembler = SocketIOPacketAssembler()
        for await body in session.messages {
            let packet: SocketIOPacket?
            do {
                switch body {
                case .text(let text): packet = try assembler.receive(text: text)
                case .binary(let bytes): packet = try assembler.receive(binary: bytes)
                }
            } catch {
                await session.close()
                return
            }
            guard let packet else { continue }
            switch packet.kind {
            case .connect:
                if let connected = await connect(packet) {
                    // A second connect to a namespace replaces the first socket, which is gone for good.
                    if let replaced = sockets.updateValue(connected, forKey: packet.namespace) {
                        leave(replaced, queue: queue)
                    }
                }
            case .disconnect:
                if let connected = sockets.removeValue(forKey: packet.namespace) { leave(connected, queue: queue) }
            case .event, .binaryEvent:
                guard let connected = sockets[packet.namespace] else { continue }
                // A socket's events wait for its `onConnect`, as a server registers its handlers there.
                queue.yield {
                    await connected.onConnect?.value
                    await dispatch(packet, on: connected.socket)
                }
            case .ack, .binaryAck:
                if let id = packet.id { sockets[packet.namespace]?.socket.resolve(id, with: packet.arguments) }
            case .connectError:
                break
            }
        }
    }

    /// Fails the socket's waiting acks at once (an `onConnect` or handler waiting for one then ends),
    /// and queues `onDisconnect` after the events that arrived before the socket left.
    private func leave(_ connected: Connected, queue: AsyncStream<Job>.Continuation) {
        connected.socket.failAll()
        let onDisconnect = namespaces[connected.socket.namespace]?.onDisconnect
        queue.yield {
            await connected.onConnect?.value
            await onDisconnect?(connected.socket)
        }
    }

    private func connect(_ packet: SocketIOPacket) async -> Connected? {
        let id = TidingsCrypto.SecureRandom.bytes(10).map { String(format: "%02x", $0) }.joined()
        let socket = SandboxSocketIOSocket(id: id, namespace: packet.namespace, auth: packet.data, session: session)
        guard let namespace = namespaces[packet.namespace] else {
            await socket.send(
                SocketIOPacket(.connectError, namespace: packet.namespace, data: ["message": "Invalid namespace"]))
            return nil
        }
        guard namespace.authorize(packet.data) else {
            await socket.send(
                SocketIOPacket(.connectError, namespace: packet.namespace, data: ["message": "Not authorized"]))
            return nil
        }
        await socket.send(SocketIOPacket(.connect, namespace: packet.namespace, data: ["sid": .string(id)]))
        let onConnect = namespace.onConnect.map { handler in Task { await handler(socket) } }
        return Connected(socket: socket, onConnect: onConnect)
    }

    private func dispatch(_ packet: SocketIOPacket, on socket: SandboxSocketIOSocket) async {
        let name = packet.eventName ?? ""
        let fault = faults.take(event: name)
        @Sendable func record(_ status: Int) {
            log.record(
                .init(
                    method: "EVENT", path: "\(packet.namespace) \(name)", status: status,
                    bytesIn: packet.encoded().text.utf8.count, bytesOut: 0, fault: fault?.description))
        }
        var ack: [JSONValue]
        switch fault {
        case .status(let status):
            ack = [["error": .int(Int64(status))]]
        case .tooManyRequests(let seconds):
            ack = [["error": 429, "retryAfter": seconds.map { .int(Int64($0)) } ?? .null]]
        case .neverAnswer:
            record(0)
            return
        case .close:
            record(0)
            await socket.disconnect()
            return
        case .dropMidResponse:
            record(0)
            await session.abort()
            return
        case .malformedBody:
            record(0)
            await session.send([.text("2/\(packet.namespace.dropFirst()),[")])
            return
        case .delay(let duration):
            // A slow handler holds only its own answer, not the session's later events.
            Task {
                try? await clock.sleep(for: duration)
                await answer(packet, with: await handle(name, packet, on: socket), on: socket, record: record)
            }
            return
        case nil:
            ack = await handle(name, packet, on: socket)
        }
        await answer(packet, with: ack, on: socket, record: record)
    }

    private func answer(
        _ packet: SocketIOPacket, with ack: [JSONValue], on socket: SandboxSocketIOSocket,
        record: @Sendable (Int) -> Void
    ) async {
        record(200)
        if let id = packet.id {
            await socket.send(SocketIOPacket(.ack, namespace: packet.namespace, id: id, data: .array(ack)))
        }
    }

    private func handle(_ name: String, _ packet: SocketIOPacket, on socket: SandboxSocketIOSocket) async -> [JSONValue]
    {
        guard let handler = namespaces[packet.namespace]?.events[name] else { return [] }
        return await handler(socket, packet.arguments)
    }
}
