import Foundation
import TidingsCore
import TidingsNet
import TidingsSandboxKit

/// The user stream (`GET /api/v1/streaming?stream=user` upgraded to a WebSocket): Mastodon's event
/// messages `{"stream":["user"],"event":…,"payload":…}`, where `payload` is a JSON *string* (a status or
/// notification) or, for `delete`, the deleted status's ID.
extension MastodonSandboxServer {
    /// Serves one user-stream WebSocket until the client closes; an unknown token is closed at once with
    /// 1008 (policy violation), a path other than the streaming one with 1003.
    nonisolated func serveStream(_ request: SandboxHTTPRequest, _ connection: LoopbackWebSocketConnection) async {
        guard request.path == "/api/v1/streaming", request.queryValue("stream") ?? "user" == "user" else {
            await connection.close(code: .unsupportedData)
            return
        }
        guard let events = await openStream(token: request.bearerToken) else {
            await connection.close(code: .policyViolation)
            return
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in events {
                    do { try await connection.send(text: event) } catch { return }
                }
            }
            group.addTask {
                // The client's messages are ignored; their end is the end of the stream.
                do { for try await _ in connection.messages {} } catch {}
            }
            await group.next()
            group.cancelAll()
        }
    }

    /// Registers a stream for the token's account; nil for an unknown token.
    func openStream(token: String?) -> AsyncStream<String>? {
        guard let viewer = account(token: token) else { return nil }
        let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingNewest(1000))
        let key = UUID()
        streams[key] = (viewer.id, continuation)
        let waiting = streamWaiters
        streamWaiters.removeAll()
        for waiter in waiting { waiter.resume() }
        continuation.onTermination = { _ in Task { await self.closeStream(key) } }
        return stream
    }

    func closeStream(_ key: UUID) { streams[key] = nil }

    /// How many user streams are open.
    public var openStreamCount: Int { streams.count }

    /// Returns once at least one user stream is open (tests wait for a client's stream before posting).
    public func waitForOpenStream() async {
        guard streams.isEmpty else { return }
        await withCheckedContinuation { streamWaiters.append($0) }
    }

    /// Sends `event` to every open stream of `recipients`; `payload` is sent as a JSON string.
    func stream(_ event: String, payload: (String) -> String, to recipients: Set<String>) {
        for (_, entry) in streams where recipients.contains(entry.accountID) {
            let message: JSONValue = [
                "stream": ["user"], "event": .string(event), "payload": .string(payload(entry.accountID)),
            ]
            entry.continuation.yield(message.jsonString())
        }
    }

    /// The accounts whose home shows statuses of `author`: the author and their followers.
    func homeAudience(of author: String) -> Set<String> {
        Set(accounts.filter { $0.following.contains(author) }.map(\.id)).union([author])
    }

    func streamUpdate(_ index: Int, event: String) {
        let status = statuses[index]
        stream(
            event, payload: { self.statusJSON(status, viewer: $0).jsonString() },
            to: homeAudience(of: status.accountID))
    }

    func streamNotification(_ notification: Notification) {
        stream(
            "notification", payload: { self.notificationJSON(notification, viewer: $0).jsonString() },
            to: [notification.recipient])
    }
}
