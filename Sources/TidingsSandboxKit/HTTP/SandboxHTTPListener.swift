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

    /// Serves requests on one connection until the client closes it, goes silent, or a fault cuts it.
    private static func serve(_ connection: TCPConnection, server: SandboxHTTPServer) async {
        defer { connection.close() }
        var buffer: [UInt8] = []
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
            let (bytesOut, finished) = await write(response, for: head, to: connection)
            server.log.record(
                .init(
                    method: request.method, path: request.path, status: finished ? response.status : 0,
                    bytesIn: headSize + head.contentLength, bytesOut: bytesOut, fault: fault?.description))
            guard finished, head.keepAlive else { return }
        }
    }

    /// Writes `response` (or as much of it as its fault allows); returns the bytes sent and whether the
    /// response completed.
    private static func write(
        _ response: SandboxHTTPResponse, for head: SandboxHTTPWire.Head, to connection: TCPConnection
    )
        async -> (Int, Bool)
    {
        if response.connectionFault == .closeWithoutAnswer { return (0, false) }
        let headBytes = SandboxHTTPWire.encodeHead(response, keepAlive: head.keepAlive)
        let bodyBytes = SandboxHTTPWire.encodeBody(response, method: head.method)
        if case .dropAfterBodyBytes(let count) = response.connectionFault {
            let bytes = headBytes + bodyBytes.prefix(max(0, min(count, bodyBytes.count)))
            _ = try? await connection.write(bytes)
            return (bytes.count, false)
        }
        guard (try? await connection.write(headBytes + bodyBytes)) != nil else { return (0, false) }
        return (headBytes.count + bodyBytes.count, true)
    }

    private static func refuse(_ connection: TCPConnection, _ error: SandboxHTTPError?, _ server: SandboxHTTPServer)
        async
    {
        let error = error ?? SandboxHTTPError(.badRequest, detail: "malformed request")
        let status = error.status
        let response = SandboxHTTPResponse.text(error.detail, status: status)
        let bytes = SandboxHTTPWire.encodeHead(response, keepAlive: false) + [UInt8](response.body)
        _ = try? await connection.write(bytes)
        server.log.record(.init(method: "?", path: "?", status: status, bytesIn: 0, bytesOut: bytes.count, fault: nil))
    }
}
