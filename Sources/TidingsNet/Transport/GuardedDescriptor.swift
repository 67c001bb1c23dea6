import TidingsCore

/// A socket descriptor that system calls reach only while it is open.
///
/// Every call runs under one lock after checking the closed flag, and closing sets the flag under
/// the same lock: once ``close(_:)`` returns, no call can touch the number, which the kernel may
/// already have given to another file. Both socket channels (epoll on Linux, dispatch sources
/// elsewhere) keep their descriptor in one, so the rule is written once.
struct GuardedDescriptor: Sendable {
    /// The descriptor number, for registering it (never for a system call outside ``withDescriptor(operation:_:)``).
    let descriptor: Int32
    private let closed = LockedState(false)

    init(_ descriptor: Int32) { self.descriptor = descriptor }

    var isClosed: Bool { closed.withLock { $0 } }

    /// Runs a non-blocking system call on the open descriptor, or fails with `.closed`.
    func withDescriptor<T>(operation: String, _ body: (Int32) -> T) throws(TransportError) -> T {
        try closed.withLock { closed throws(TransportError) in
            guard !closed else { throw TransportError(kind: .closed, operation: operation) }
            return body(descriptor)
        }
    }

    /// Marks the descriptor closed and, the first time only, runs `body` with it under the lock (to
    /// unregister or close it before any other call can see it); returns whether this call closed it.
    @discardableResult
    func close(_ body: (Int32) -> Void = { _ in }) -> Bool {
        closed.withLock { closed in
            guard !closed else { return false }
            closed = true
            body(descriptor)
            return true
        }
    }
}
