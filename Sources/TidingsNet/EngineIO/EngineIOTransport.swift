import Foundation

/// One Engine.IO session as Socket.IO uses it: messages in, messages out, in order.
///
/// Implemented by ``EngineIOClient`` over HTTP long-polling and WebSocket, and by in-memory doubles
/// in tests.
public protocol EngineIOSession: Sendable {
    /// The `message` packets the server sends, in order. The stream finishes when the session closes
    /// cleanly and throws when it fails (transport error, heartbeat timeout).
    var messages: AsyncThrowingStream<EngineIOPacket.Body, any Error> { get }

    /// Queues `messages` to go out together and in order, after every message queued before.
    ///
    /// Never waits: returns once they are queued, not once delivered; a later failure ends
    /// ``messages``.
    /// - Throws: ``EngineIOError/closed`` when the session is closed.
    func send(_ messages: [EngineIOPacket.Body]) throws

    /// Closes the session; ``messages`` finishes. Idempotent.
    func close() async
}

/// A source of Engine.IO sessions: each call opens a new one (a new handshake).
public protocol EngineIOConnector: Sendable {
    /// Opens a session, returning once the handshake is done.
    ///
    /// - Throws: ``EngineIOError`` when the server cannot be reached or refuses the handshake.
    func connect() async throws -> any EngineIOSession
}

/// The HTTP requests of the long-polling transport.
///
/// The default is ``EngineIOHTTPConnectionPool``, a keep-alive HTTP/1.1 client; any other
/// implementation (URLSession on Apple platforms) may stand in.
public protocol EngineIOPollingHTTP: Sendable {
    /// Sends a GET and returns the body of a 200 response.
    ///
    /// - Throws: ``EngineIOError/httpStatus`` for another status, ``EngineIOError/transportFailed``.
    func get(_ url: URL, headers: [String: String]) async throws -> [UInt8]

    /// Sends a POST with `body` and returns the body of a 200 response.
    ///
    /// - Throws: ``EngineIOError/httpStatus`` for another status, ``EngineIOError/transportFailed``.
    func post(_ url: URL, body: [UInt8], headers: [String: String]) async throws -> [UInt8]
}

/// A WebSocket connection as the Engine.IO client needs it.
public protocol EngineIOWebSocket: Sendable {
    /// The messages received, in order; finishes on a clean close, throws on failure.
    var frames: AsyncThrowingStream<EngineIOFrame, any Error> { get }
    /// Sends one message; messages go out in call order.
    func send(_ frame: EngineIOFrame) async throws
    /// Starts the close handshake; idempotent.
    func close() async
}

/// Opens WebSocket connections for the Engine.IO client.
public protocol EngineIOWebSocketFactory: Sendable {
    /// Opens a WebSocket to `url` (`ws` or `wss`) with extra request `headers`.
    func connect(to url: URL, headers: [String: String]) async throws -> any EngineIOWebSocket
}

// Apple platforms only: on Linux URLSession lives in FoundationNetworking (libcurl), which TidingsNet does not
// link (see ``HTTPClient``); ``EngineIOHTTPConnectionPool`` is the polling transport there.
#if !TIDINGS_OPENSSL
    /// Polling over URLSession (Apple platforms): simple, but slower than ``EngineIOHTTPConnectionPool``.
    public struct URLSessionPollingHTTP: EngineIOPollingHTTP {
        private let session: URLSession

        /// A transport with its own ephemeral session (no shared cookies or cache).
        public init() {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.timeoutIntervalForRequest = 120
            configuration.httpCookieStorage = nil
            configuration.urlCache = nil
            session = URLSession(configuration: configuration)
        }

        /// Sends a GET and returns the body of a 200 response.
        public func get(_ url: URL, headers: [String: String]) async throws -> [UInt8] {
            var request = URLRequest(url: url)
            for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
            return try await run(request)
        }

        /// Sends a POST with `body` and returns the body of a 200 response.
        public func post(_ url: URL, body: [UInt8], headers: [String: String]) async throws -> [UInt8] {
            var request = URLRequest(url: url)
            request.httpMethod = "POST"
            request.httpBody = Data(body)
            request.setValue("text/plain; charset=UTF-8", forHTTPHeaderField: "Content-Type")
            for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
            return try await run(request)
        }

        private func run(_ request: URLRequest) async throws -> [UInt8] {
            let data: Data
            let response: URLResponse
            do {
                (data, response) = try await session.data(for: request)
            } catch {
                throw EngineIOError(.transportFailed, "\(request.httpMethod ?? "GET") failed: \(error)")
            }
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            guard status == 200 else {
                throw EngineIOError(.httpStatus, "HTTP \(status): \(String(decoding: data.prefix(200), as: UTF8.self))")
            }
            return [UInt8](data)
        }
    }
#endif
