import Foundation
import TidingsCore
import TidingsNet

/// The in-process twin of a WebSocket upgrade on a socket: the same fault switches, authorization, log
/// entry and handler, with an in-memory pair instead of a handshake.
enum InMemoryUpgrade {
    /// Upgrades `path` in memory; the handler runs in a task registered in `tasks` (so a server's
    /// `stop()` can cancel it) and the server's side closes when it returns.
    ///
    /// - Throws: ``TidingsNet/WebSocketError`` `handshakeFailed` with the HTTP status a socket client
    ///   would have seen (a fault's status, 429, or `refusal` — 401 unless given — when `authorize` refuses);
    ///   `CancellationError`
    ///   when a `neverAnswer` fault holds the upgrade and the caller gives up.
    static func connect(
        path: String, faults: SandboxFaultSwitch, log: SandboxRequestLog, clock: any Clock<Duration>, tasks: TaskBag,
        refusal: Int = 401, authorize: () async -> Bool,
        handler: @escaping @Sendable (LoopbackWebSocketConnection) async -> Void
    ) async throws -> SandboxInMemoryWebSocket {
        let fault = faults.take(method: "GET", path: path)
        func refuse(_ status: Int) -> WebSocketError {
            log.record(
                .init(method: "WS", path: path, status: status, bytesIn: 0, bytesOut: 0, fault: fault?.description))
            return WebSocketError(.handshakeFailed, detail: "the sandbox answered \(status)", httpStatus: status)
        }
        switch fault {
        case .status(let status): throw refuse(status)
        case .tooManyRequests: throw refuse(429)
        case .neverAnswer:
            await waitUntilCancelled()
            throw CancellationError()
        case .delay(let duration): try await clock.sleep(for: duration)
        default: break
        }
        guard await authorize() else { throw refuse(refusal) }
        log.record(.init(method: "WS", path: path, status: 101, bytesIn: 0, bytesOut: 0, fault: fault?.description))
        let (client, server) = SandboxInMemoryWebSocket.pair()
        switch fault {
        case .close(let code):
            await server.close(code: WebSocketCloseCode(rawValue: code))
        case .dropMidResponse, .malformedBody:
            server.abort()
        default:
            let task = Task {
                await handler(server)
                await server.close()
            }
            tasks.add(task)
        }
        return client
    }
}

/// The in-process handler tasks of a server, cancelled together when it stops.
final class TaskBag: Sendable {
    private let tasks = LockedState<[Task<Void, Never>]>([])

    func add(_ task: Task<Void, Never>) { tasks.withLock { $0.append(task) } }

    func cancelAll() {
        for task in tasks.withLock({ $0 }) { task.cancel() }
    }
}
