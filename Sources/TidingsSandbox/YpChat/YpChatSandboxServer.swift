import Foundation
import TidingsCore
import TidingsNet
import TidingsSandboxKit
import TidingsYpChat

/// A YpChat server for tests, previews and `tidings sandbox ypchat`, on TidingsSandboxKit: the REST
/// routes and the Socket.IO endpoint (`/socket.io/`, polling and WebSocket) on one port, as the
/// real server has them.
///
/// ``YpChatSandboxState`` holds the REST semantics and sessions, ``YpChatSandboxChat`` the socket's.
/// Everything answers in process (``http``'s `handle(_:)`, ``inProcessConnector(transports:)``) and
/// on 127.0.0.1 (``serve(port:)``); faults and the request log are the kit's (``faults``, ``log``):
/// HTTP rules match paths, Socket.IO rules match event names.
public final class YpChatSandboxServer: Sendable {
    /// The express session cookie's name.
    public static let cookieName = YpChatRESTClient.sessionCookieName

    /// The REST state (sessions, feedback, uploads).
    public let state: YpChatSandboxState
    /// The socket state (users online, messages, blocks).
    public let chat: YpChatSandboxChat
    /// The HTTP server: REST routes, and Engine.IO under `/socket.io/`.
    public let http: SandboxHTTPServer
    /// The Socket.IO layer.
    public let socketIO: SandboxSocketIOServer
    private let handshakes = LockedState<[String?]>([])

    /// The fault switches every request and event passes.
    public var faults: SandboxFaultSwitch { http.faults }
    /// Every request and event served.
    public var log: SandboxRequestLog { http.log }
    /// The `connect.sid` cookie's value of every Engine.IO handshake (nil: none sent), in order.
    public var handshakeSessionCookies: [String?] { handshakes.withLock { $0 } }

    /// A server over `state`; `engine` sets heartbeat timing and the clock of delay faults,
    /// `inactivityClock` the clock of the 30-minute inactivity rule (``YpChatSandboxChat``).
    public init(
        state: YpChatSandboxState = YpChatSandboxState(),
        engine: SandboxEngineIOServer.Configuration = SandboxEngineIOServer.Configuration(),
        faults: SandboxFaultSwitch = SandboxFaultSwitch(), log: SandboxRequestLog = SandboxRequestLog(),
        inactivityClock: any Clock<Duration> = ContinuousClock()
    ) {
        self.state = state
        let chat = YpChatSandboxChat(state: state, inactivityClock: inactivityClock)
        self.chat = chat
        var namespace = SandboxSocketIOServer.Namespace()
        namespace.onConnect = { await chat.connected($0) }
        namespace.onDisconnect = { await chat.disconnected($0) }
        for event in [
            "setSessionId", "login", "message", "requestConversation", "userSearch", "requestHistory",
            "requestOpenConversations", "blockUser", "unblockUser",
        ] {
            namespace.events[event] = { socket, arguments in
                await chat.handle(event, arguments, on: socket)
                return []
            }
        }
        let socketIO = SandboxSocketIOServer(
            namespaces: ["/": namespace], configuration: engine, faults: faults, log: log)
        self.socketIO = socketIO
        let router = Self.restRouter(state: state)
        let handshakes = self.handshakes
        http = SandboxHTTPServer(
            faults: faults, log: log, clock: engine.clock,
            webSocket: { request, socket in
                guard request.path.hasPrefix("/socket.io"), await !chat.variant.pollingOnly else { return }
                if request.queryValue("sid") == nil {
                    handshakes.withLock { $0.append(request.cookies[YpChatRESTClient.sessionCookieName]) }
                }
                await socketIO.engine.handleWebSocket(request, socket)
            },
            handler: { request in
                guard request.path.hasPrefix("/socket.io") else {
                    guard request.method == "POST", request.path == "/api/logout",
                        let session = await state.session(cookie: request.cookies[YpChatRESTClient.sessionCookieName])
                    else { return await router.route(request) }
                    let response = await router.route(request)
                    if (200..<300).contains(response.status) { await chat.sessionEnded(session.id) }
                    return response
                }
                if request.method == "GET", request.queryValue("sid") == nil {
                    handshakes.withLock { $0.append(request.cookies[YpChatRESTClient.sessionCookieName]) }
                }
                return await socketIO.engine.handle(request)
            })
    }

    /// Opens Engine.IO sessions to this server's Socket.IO side with no socket (polling through
    /// the handler, WebSocket through an in-memory pair), for `YpChatSocketClient(rest:connector:)`.
    ///
    /// The in-process URL is not the REST base URL, so no cookie reaches this handshake: a client
    /// binds its session with `setSessionId` (``YpChatSandboxChat/sessionIDsReceived``).
    public func inProcessConnector(transports: EngineIOClient.Transports = .pollingThenWebSocket)
        -> any EngineIOConnector
    {
        socketIO.inProcessConnector(transports: transports)
    }

    /// Serves REST and Socket.IO on 127.0.0.1 at `port` (0: a free one) until the listener stops.
    ///
    /// - Throws: `TransportError` when the port cannot be bound.
    public func serve(port: Int = 0) throws -> SandboxHTTPListener { try http.serve(port: port) }
}
