import Dispatch
import Foundation
import TidingsCore

// Apple platforms: readiness from dispatch sources (kqueue underneath), resumed only while a task
// waits. Linux uses the epoll reactor of SocketChannel+Epoll.swift instead: one edge-triggered
// registration per socket, with no suspend/resume bookkeeping to get wrong. Both hand events to the same
// `ReadinessWaiter` and keep their descriptor in a `GuardedDescriptor`.
#if !os(Linux)
    /// One serial queue for every socket's readiness events: handlers only resume a continuation,
    /// so a single queue acts as the reactor thread without a thread per connection.
    let reactorQueue = DispatchQueue(label: "tidings.net.reactor")

    /// A dispatch source as a ``ReadinessSource``: resumed only while a task waits and suspended again
    /// after each event, since a level-triggered source with nobody waiting would fire continuously.
    // @unchecked: the dispatch source is not `Sendable` in the SDK; this value lives only inside its
    // waiter's `LockedState`, so every suspend, resume and cancel happens under that lock, in order.
    struct DispatchReadinessSource: ReadinessSource, @unchecked Sendable {
        let source: any DispatchSourceProtocol
        var suspended = true
        var isCancelled = false

        mutating func waiterParked() {
            guard suspended, !isCancelled else { return }
            source.resume()
            suspended = false
        }

        mutating func signalled() {
            guard !suspended, !isCancelled else { return }
            source.suspend()
            suspended = true
        }

        mutating func cancelled() {
            isCancelled = true
            source.cancel()
            // A suspended (or never activated) source must be resumed to deliver its cancel handler and
            // to be released safely.
            if suspended {
                source.resume()
                suspended = false
            }
        }
    }

    typealias DispatchReadinessWaiter = ReadinessWaiter<DispatchReadinessSource>

    /// A non-blocking socket descriptor with its read and write readiness sources.
    ///
    /// System calls on the descriptor go through ``withDescriptor(operation:_:)``, which refuses them once
    /// ``close()`` began (see ``GuardedDescriptor``). The descriptor itself is closed only after both
    /// dispatch sources finished cancelling.
    final class SocketChannel: Sendable {
        let readable: DispatchReadinessWaiter
        let writable: DispatchReadinessWaiter
        private let guarded: GuardedDescriptor

        init(descriptor: Int32) {
            guarded = GuardedDescriptor(descriptor)
            let readSource = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: reactorQueue)
            let writeSource = DispatchSource.makeWriteSource(fileDescriptor: descriptor, queue: reactorQueue)
            let readable = DispatchReadinessWaiter(
                operation: "read", source: DispatchReadinessSource(source: readSource))
            let writable = DispatchReadinessWaiter(
                operation: "write", source: DispatchReadinessSource(source: writeSource))
            self.readable = readable
            self.writable = writable
            readSource.setEventHandler { [weak readable] in readable?.signal() }
            writeSource.setEventHandler { [weak writable] in writable?.signal() }
            let pendingCancels = LockedState(2)
            let closeWhenBothCancelled: @Sendable () -> Void = {
                let last = pendingCancels.withLock { pending -> Bool in
                    pending -= 1
                    return pending == 0
                }
                if last { _ = systemClose(descriptor) }
            }
            readSource.setCancelHandler(handler: closeWhenBothCancelled)
            writeSource.setCancelHandler(handler: closeWhenBothCancelled)
        }

        deinit { close() }

        var isClosed: Bool { guarded.isClosed }

        /// Runs a non-blocking system call on the open descriptor, or fails with `.closed`.
        func withDescriptor<T>(operation: String, _ body: (Int32) -> T) throws(TransportError) -> T {
            try guarded.withDescriptor(operation: operation, body)
        }

        func close() {
            guard guarded.close() else { return }
            readable.cancel()
            writable.cancel()
        }
    }
#endif
