import Foundation
import TidingsCore
import TidingsNet

/// A ``SandboxHTTPServer`` behind real sockets on loopback: HTTP/1.1 with keep-alive, one task per
/// connection, no thread per connection.
///
/// Guarantees: every read from a client has a deadline (``idleTimeout``), so a silent client cannot
/// hold a task forever; malformed requests get 400/413 and the connection closes; ``stop()`` closes the
/// listening socket and cancels every connection, including one held by a `neverAnswer` fault.
public final class SandboxHTTPListener: Sendable {
    /// How long a connection may stay silent before the server closes it.
    public static let idleTimeout: Duration = .seconds(30)

    /// The bound port.
    public let port: Int
    /// `http://127.0.0.1:<port>/`.
    public let url: URL

    private let listener: TCPListener
    private let acceptTask: Task<Void, Never>

    init(server: SandboxHTTPServer, host: String, port: Int) throws {
        let listener = try TCPListener.bind(host: host, port: port)
        self.listener = listener
        self.port = listener.port
        self.url = URL(string: "http://\(host):\(listener.port)/") ?? URL(fileURLWithPath: "/")
        acceptTask = Task {
            await withDiscardingTaskGroup { group in
                while !Task.isCancelled {
                    guard let connection = try? await listener.accept() else { break }
                    group.addTask { await Self.serve(connection, server: server) }
                }
                group.cancelAll()
            }
        }
    }

    /// Stops accepting and cancels every open connection.
    public func stop() {
        listener.close()
        acceptTask.cancel()
    }

    deinit { stop() }

    /// Serves requests on one connection until the client closes it, goes silent, or a fault cuts it;
    /// `initial` holds bytes already read from it (a request another listener on the port passed on).
    static func serve(_ connection: TCPConnection, server: SandboxHTTPServer, initial: [UInt8] = []) async {
        defer { connection.close() }
        var buffer: [UInt8] = initial
        let terminator: [UInt8] = Array("\r\n\r\n".utf8)
        while !Task.isCancelled {
            var headEnd = buffer.firstRange(of: terminator)
            while headEnd == nil {
                guard buffer.count <= SandboxHTTPWire.maximumHeadSize else {
                    await refuse(connection, SandboxHTTPError(.tooLarge, detail: "request head too large"), server)
                    return
                }
                guard let chunk = try? await withDeadline(idleTimeout, { try await connection.read() }),
                    !chunk.isEmpty
                else { return }
                buffer += chunk
                headEnd = buffer.firstRange(of: terminator)
            }
            guard let end = headEnd else { return }
            let head: SandboxHTTPWire.Head
            do { head = try SandboxHTTPWire.parseHead(buffer[..<end.lowerBound]) } catch {
                await refuse(connection, error as? SandboxHTTPError, server)
                return
            }
            let headSize = end.upperBound
            buffer.removeFirst(headSize)
            if let webSocket = server.webSocket, head.method == "GET",
                head.headers["Upgrade"]?.lowercased() == "websocket"
            {
                await upgrade(connection, head: head, headSize: headSize, leftover: buffer, server, webSocket)
                return
            }
            if head.headers["Expect"]?.lowercased() == "100-continue", head.contentLength > 0 {
                guard (try? await connection.write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))) != nil else { return }
            }
            while buffer.count < head.contentLength {
                guard let chunk = try? await withDeadline(idleTimeout, { try await connection.read() }),
                    !chunk.isEmpty
                else { return }
                buffer += chunk
            }
            let body = Data(buffer.prefix(head.contentLength))
            buffer.removeFirst(head.contentLength)

            let request = SandboxHTTPRequest(
                method: head.method, target: head.target, headers: head.headers, body: body)
            let (response, fault) = await server.respond(to: request)
            let (bytes, completes) = wireBytes(response, for: head)
            // Logged before the bytes leave, so a client that reads the response finds the entry.
            server.log.record(
                .init(
                    method: request.method, path: request.path, status: completes ? response.status : 0,
                    bytesIn: headSize + head.contentLength, bytesOut: bytes.count, fault: fault?.description))
            if !bytes.isEmpty {
                guard (try? await connection.write(bytes)) != nil else { return }
            }
            guard completes, head.keepAlive else { return }
        }
    }

    /// The bytes to send for `response` (as much of it as its fault allows) and whether the response
    /// completes.
    private static func wireBytes(_ response: SandboxHTTPResponse, for head: SandboxHTTPWire.Head) -> ([UInt8], Bool) {
        if response.connectionFault == .closeWithoutAnswer { return ([], false) }
        let headBytes = SandboxHTTPWire.encodeHead(response, keepAlive: head.keepAlive)
        let bodyBytes = SandboxHTTPWire.encodeBody(response, method: head.method)
        if case .dropAfterBodyBytes(let count) = response.connectionFault {
            return (headBytes + bodyBytes.prefix(max(0, min(count, bodyBytes.count))), false)
        }
        return (headBytes + bodyBytes, true)
    }

    /// Hands an `Upgrade: websocket` request to the server's WebSocket handler, with the faults applied
    /// to the upgrade as ``LoopbackWebSocketServer`` applies them.
    private static func upgrade(
        _ connection: TCPConnection, head: SandboxHTTPWire.Head, headSize: Int, leftover: [UInt8],
        _ server: SandboxHTTPServer, _ handler: SandboxHTTPServer.WebSocketHandler
    ) async {
        let request = SandboxHTTPRequest(method: head.method, target: head.target, headers: head.headers)
        func answer(_ status: Int, _ extra: String = "", fault: SandboxFaults.Action? = nil) async {
            let reply = "HTTP/1.1 \(status) \(SandboxHTTPResponse.reason(status))\r\n\(extra)Content-Length: 0\r\n\r\n"
            server.log.record(
                .init(
                    method: "WS", path: request.path, status: status, bytesIn: headSize,
                    bytesOut: reply.utf8.count, fault: fault?.description))
            _ = try? await connection.write(Array(reply.utf8))
        }
        guard head.headers["Sec-WebSocket-Version"] == "13", let key = head.headers["Sec-WebSocket-Key"] else {
            await answer(400)
            return
        }
        let fault = server.faults.take(method: "GET", path: request.path)
        switch fault {
        case .status(let status):
            await answer(status, fault: fault)
            return
        case .tooManyRequests(let seconds):
            await answer(429, seconds.map { "Retry-After: \($0)\r\n" } ?? "", fault: fault)
            return
        case .neverAnswer:
            await waitUntilCancelled()
            return
        case .delay(let duration):
            try? await server.clock.sleep(for: duration)
        default:
            break
        }
        let accept = WebSocketServerHandshake.acceptValue(for: key)
        let reply =
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: \(accept)\r\n\r\n"
        server.log.record(
            .init(
                method: "WS", path: request.path, status: 101, bytesIn: headSize, bytesOut: reply.utf8.count,
                fault: fault?.description))
        guard (try? await connection.write(Array(reply.utf8))) != nil else { return }
        let socket = LoopbackWebSocketConnection(connection)
        let reader = Task { await socket.readLoop(initial: leftover) }
        switch fault {
        case .close(let code): await socket.close(code: WebSocketCloseCode(rawValue: code))
        case .dropMidResponse, .malformedBody: socket.abort()
        default: await handler(request, socket)
        }
        await socket.close()
        reader.cancel()
    }

    private static func refuse(_ connection: TCPConnection, _ error: SandboxHTTPError?, _ server: SandboxHTTPServer)
        async
    {
        let error = error ?? SandboxHTTPError(.badRequest, detail: "malformed request")
        let status = error.status
        let response = SandboxHTTPResponse.text(error.detail, status: status)
        let bytes = SandboxHTTPWire.encodeHead(response, keepAlive: false) + [UInt8](response.body)
        server.log.record(.init(method: "?", path: "?", status: status, bytesIn: 0, bytesOut: bytes.count, fault: nil))
        _ = try? await connection.write(bytes)
    }
}
