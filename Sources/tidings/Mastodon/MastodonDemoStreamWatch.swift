import Foundation
import TidingsCore
import TidingsMastodon
import TidingsNet

/// Watches the demo's user-stream connections so the driver knows when the stream has handled every message it
/// was sent: a connection is at rest only while its reader waits for the next message. (A burst of 45 posts
/// is 45 messages; moving the clock before they are read would close the coalescing window early.)
final class MastodonDemoStreamWatch: Sendable {
    private struct State {
        var live = 0
        var waiting = 0
        var delivered = 0
    }

    private let state = LockedState(State())

    /// Whether a live connection's reader is busy with a message, and how many messages were read so far.
    var snapshot: (busy: Bool, delivered: Int) { state.withLock { ($0.live > $0.waiting, $0.delivered) } }

    /// `inner`, with every connection it opens watched.
    func watching(_ inner: @escaping MastodonStreamConnector) -> MastodonStreamConnector {
        { url, headers in
            let connection = try await inner(url, headers)
            self.state.withLock { $0.live += 1 }
            return WatchedConnection(inner: connection, watch: self)
        }
    }

    fileprivate func reading<T: Sendable>(_ body: () async throws -> T?) async rethrows -> T? {
        state.withLock { $0.waiting += 1 }
        let message: T?
        do {
            message = try await body()
        } catch {
            state.withLock {
                $0.waiting -= 1
                $0.live -= 1
            }
            throw error
        }
        state.withLock {
            $0.waiting -= 1
            if message == nil { $0.live -= 1 } else { $0.delivered += 1 }
        }
        return message
    }
}

/// A connection whose messages are pulled one at a time from the watched one, as its reader asks for them.
private struct WatchedConnection: MastodonStreamConnection {
    let inner: any MastodonStreamConnection
    let watch: MastodonDemoStreamWatch

    var messages: AsyncThrowingStream<WebSocketMessage, any Error> {
        // The reader asks for one message at a time, so the iterator is never used by two tasks at once.
        nonisolated(unsafe) var iterator = inner.messages.makeAsyncIterator()
        let watch = watch
        return AsyncThrowingStream {
            try await watch.reading { try await iterator.next() }
        }
    }

    func close() async { await inner.close() }
}
