// A YpChat server for end-to-end tests — the Swift sandbox on loopback or the python-socketio peer —
// and repositories talking to it over the real wire.
import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsNet
import TidingsSandbox
import TidingsSandboxKit
import TidingsYpChat

/// Which server an end-to-end test talks to.
enum ChatBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// `YpChatSandboxServer` on 127.0.0.1.
    case sandbox
    /// `Tests/Peers/ypchat_peer.py` (python-socketio + aiohttp) on 127.0.0.1.
    case python

    var testDescription: String { rawValue }
}

/// One running server and what the tests ask of it besides the YpChat protocol.
final class ChatServerUnderTest: Sendable {
    let backend: ChatBackend
    let baseURL: String
    let adminPassword: String
    /// The sandbox, when the backend is the sandbox.
    let sandbox: YpChatSandboxServer?
    private let listener: SandboxHTTPListener?
    private let peer: PythonPeer?

    private init(
        backend: ChatBackend, baseURL: String, adminPassword: String, sandbox: YpChatSandboxServer?,
        listener: SandboxHTTPListener?, peer: PythonPeer?
    ) {
        self.backend = backend
        self.baseURL = baseURL
        self.adminPassword = adminPassword
        self.sandbox = sandbox
        self.listener = listener
        self.peer = peer
    }

    static func start(_ backend: ChatBackend, sandbox: YpChatSandboxServer = YpChatSandboxServer()) async throws
        -> ChatServerUnderTest
    {
        switch backend {
        case .sandbox:
            let listener = try sandbox.serve()
            var base = listener.url.absoluteString
            while base.hasSuffix("/") { base.removeLast() }
            return ChatServerUnderTest(
                backend: backend, baseURL: base, adminPassword: sandbox.state.adminPassword,
                sandbox: sandbox, listener: listener, peer: nil)
        case .python:
            let peer = try await PythonPeer.start("ypchat_peer.py")
            return ChatServerUnderTest(
                backend: backend, baseURL: "http://127.0.0.1:\(peer.port)", adminPassword: "peer-admin",
                sandbox: nil, listener: nil, peer: peer)
        }
    }

    func stop() {
        listener?.stop()
        peer?.stop()
    }

    /// A REST client with a cookie jar of its own.
    func restClient() throws -> YpChatRESTClient {
        YpChatRESTClient(configuration: try YpChatConfiguration(baseURL: baseURL, allowsInsecureHTTP: true))
    }

    /// A repository over a fresh REST client; its sockets reconnect quickly.
    func repository(
        clock: TestClock? = nil, profileStore: YpChatProfileStore? = nil, logger: TidingsLogger = .disabled
    ) throws -> YpChatRepository {
        let rest = try restClient()
        let socket: YpChatRepository.SocketFactory = { YpChatSocketClient(rest: $0, options: quickOptions()) }
        if let clock {
            return YpChatRepository(
                rest: rest, socket: socket, profileStore: profileStore, clock: clock, logger: logger)
        }
        return YpChatRepository(rest: rest, socket: socket, profileStore: profileStore, logger: logger)
    }

    /// Every `setSessionId` the server received, in order.
    func sessionIDsReceived() async throws -> [String] {
        if let sandbox { return await sandbox.chat.sessionIDsReceived.map(\.session) }
        let answer = try await HTTPClient().send(HTTPRequest(url: try url("/debug")))
        return try JSONValue(parsing: answer.body)["sessionIds"]?.arrayValue?.compactMap(\.stringValue) ?? []
    }

    /// Moves the server's inactivity clock forward (the sandbox's `TestClock`, the peer's virtual clock).
    func advanceInactivityClock(by seconds: Int, sandboxClock: TestClock?) async throws {
        if let sandboxClock { return await sandboxClock.advance(by: .seconds(seconds)) }
        let body: JSONValue = ["seconds": .int(Int64(seconds))]
        _ = try await HTTPClient().send(try HTTPRequest.json(.post, url: try url("/debug/advance"), body: body))
    }

    /// Sends `event` with `arguments` as they are to `userName`'s sockets.
    func inject(_ event: String, _ arguments: [JSONValue], toUser userName: String) async throws {
        if let sandbox { return await sandbox.chat.inject(event, arguments, toUser: userName) }
        let body: JSONValue = ["toUser": .string(userName), "event": .string(event), "args": .array(arguments)]
        _ = try await HTTPClient().send(try HTTPRequest.json(.post, url: try url("/debug/emit"), body: body))
    }

    private func url(_ path: String) throws -> URL {
        guard let url = URL(string: baseURL + path) else { throw StreamEnded() }
        return url
    }
}

/// Reads `repository`'s states until one satisfies `predicate` (the suite's time limit bounds it).
@discardableResult
func until(_ repository: YpChatRepository, _ predicate: @Sendable (ChatState) -> Bool) async throws -> ChatState {
    for await state in await repository.states() where predicate(state) { return state }
    throw StreamEnded()
}

/// A logged-in repository for `name` (fresh session, socket connected).
func loggedIn(
    _ name: String, on server: ChatServerUnderTest, age: Int = 30, country: String = "DE", gender: String = "w",
    clock: TestClock? = nil
) async throws -> YpChatRepository {
    let repository = try server.repository(clock: clock)
    await repository.login(ChatProfile(userName: name, gender: gender, age: age, country: country))
    try await until(repository) { $0.currentUser?.userName == name && $0.connection == .connected }
    return repository
}
