import Dispatch
import Foundation
import TidingsCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A `TCPConnection` is a ``ByteStream`` over a non-blocking TCP socket.
///
/// Reads and writes suspend the calling task (never a thread) until the socket is ready; readiness
/// comes from dispatch sources on one shared reactor queue. There is no read timeout: an idle,
/// healthy connection stays open until either side closes it. Closing (or releasing the object)
/// releases the socket. Should the process's socket reactor fail (`epoll_wait` errors other than
/// `EINTR`), every pending and later wait fails with ``TransportError/system`` (operation
/// `poll`) instead of hanging. For example:
///
/// ```swift
/// let connection = try await TCPConnection.connect(host: "127.0.0.1", port: 8080, timeout: .seconds(5))
/// try await connection.write(Array("ping\n".utf8))
/// let reply = try await connection.read()
/// connection.close()
/// ```
public final class TCPConnection: ByteStream, Sendable {
    let channel: SocketChannel
    private let writeLock = AsyncLock()
    #if os(Linux)
        /// Whether waits for readability are being coalesced, and the low-water mark the socket has.
        private let coalescing: LockedState<CoalescingState>
    #endif
    /// The host (or address) this connection was opened to, or the peer address for accepted ones.
    public let remoteHost: String
    /// The largest chunk one `read()` returns.
    public static let readChunkSize = 64 * 1024

    init(channel: SocketChannel, remoteHost: String, readCoalescing: ReadCoalescer.Settings = .init()) {
        self.channel = channel
        self.remoteHost = remoteHost
        #if os(Linux)
            coalescing = LockedState(CoalescingState(policy: ReadCoalescer(settings: readCoalescing)))
        #endif
        var one: Int32 = 1
        // Small frames (pings, acks) must not wait for Nagle's algorithm.
        _ = try? channel.withDescriptor(operation: "configure") {
            setsockopt($0, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    deinit { channel.close() }

    /// Opens a TCP connection to `host`:`port`, trying each resolved address in order.
    ///
    /// - Parameters:
    ///   - host: a host name or an IPv4/IPv6 literal.
    ///   - port: the TCP port.
    ///   - timeout: the limit for name resolution plus connecting, measured on `clock`.
    ///   - clock: the clock that measures `timeout`.
    /// - Returns: an open connection.
    /// - Throws: ``TransportError`` (`hostNotFound`, `connectionRefused`, `timedOut`, `system`),
    ///   `CancellationError`.
    public static func connect(
        host: String,
        port: Int,
        timeout: Duration = .seconds(30),
        clock: any Clock<Duration> = ContinuousClock()
    ) async throws -> TCPConnection {
        try await withTimeout(
            timeout, clock: clock,
            timeoutError: { TransportError(kind: .timedOut, operation: "connect", host: host) }
        ) {
            try await connectWithoutTimeout(host: host, port: port)
        }
    }

    private static func connectWithoutTimeout(host: String, port: Int) async throws -> TCPConnection {
        let addresses = try await resolve(host: host, port: port)
        var lastError = TransportError(kind: .connectionRefused, operation: "connect", host: host)
        for address in addresses {
            try Task.checkCancellation()
            let descriptor = socket(address.family, socketStreamType, 0)
            guard descriptor >= 0 else {
                lastError = TransportError(kind: .system, operation: "socket", host: host, code: errno)
                continue
            }
            let configureError = configureSocket(descriptor)
            guard configureError == 0 else {
                _ = systemClose(descriptor)
                lastError = TransportError(kind: .system, operation: "fcntl", host: host, code: configureError)
                continue
            }
            let result = address.storage.withUnsafeBytes { raw in
                raw.withMemoryRebound(to: sockaddr.self) { systemConnect(descriptor, $0.baseAddress, address.length) }
            }
            let code = errno
            // The channel (and its readiness registration) comes after `connect`, so the first
            // write-readiness it reports belongs to the connection attempt, not to the fresh socket.
            let channel = SocketChannel(descriptor: descriptor)
            if result == 0 { return TCPConnection(channel: channel, remoteHost: host) }
            guard code == EINPROGRESS else {
                channel.close()
                lastError = TransportError(
                    kind: code == ECONNREFUSED ? .connectionRefused : .system, operation: "connect", host: host,
                    code: code, detail: errnoDescription(code))
                continue
            }
            do {
                while true {
                    try await channel.writable.wait()
                    let outcome = try channel.withDescriptor(operation: "connect") { descriptor -> Int32? in
                        var socketError: Int32 = 0
                        var length = socklen_t(MemoryLayout<Int32>.size)
                        _ = getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &socketError, &length)
                        if socketError != 0 { return socketError }
                        var peer = sockaddr_storage()
                        var peerLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
                        let connected = withUnsafeMutablePointer(to: &peer) {
                            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                                getpeername(descriptor, $0, &peerLength)
                            }
                        }
                        // Not connected and no error yet: a spurious wake-up, keep waiting.
                        return connected == 0 ? 0 : nil
                    }
                    guard let socketError = outcome else { continue }
                    if socketError == 0 { return TCPConnection(channel: channel, remoteHost: host) }
                    channel.close()
                    lastError = TransportError(
                        kind: socketError == ECONNREFUSED ? .connectionRefused : .system, operation: "connect",
                        host: host, code: socketError, detail: errnoDescription(socketError))
                    break
                }
            } catch {
                channel.close()
                throw error
            }
        }
        throw lastError
    }

    /// Reads up to ``readChunkSize`` bytes; an empty array means end of stream.
    ///
    /// - Throws: ``TransportError`` (`closed`, `connectionReset`, `system`, `concurrentRead`),
    ///   `CancellationError`.
    public func read() async throws -> [UInt8] {
        while true {
            var code: Int32 = 0
            var failed = false
            // Not zero-filled: recv overwrites what it returns, and the rest is cut off.
            let buffer = try [UInt8](unsafeUninitializedCapacity: Self.readChunkSize) { raw, initialized in
                let count = try channel.withDescriptor(operation: "read") { descriptor -> Int in
                    let count = recv(descriptor, raw.baseAddress, raw.count, 0)
                    if count < 0 { code = errno }
                    return count
                }
                failed = count < 0
                initialized = max(count, 0)
            }
            if !failed {
                #if os(Linux)
                    if !buffer.isEmpty { coalescing.withLock { $0.didRead(count: buffer.count) } }
                #endif
                return buffer
            }
            switch code {
            case EAGAIN, EWOULDBLOCK:
                #if os(Linux)
                    try prepareWait()
                #endif
                try await channel.readable.wait()
            case EINTR: continue
            case ECONNRESET, EPIPE, ETIMEDOUT:
                throw TransportError(
                    kind: .connectionReset, operation: "read", host: remoteHost, code: code,
                    detail: errnoDescription(code))
            default:
                throw TransportError(
                    kind: .system, operation: "read", host: remoteHost, code: code, detail: errnoDescription(code))
            }
        }
    }

    /// Writes all of `bytes`; concurrent writers are serialised in call order.
    ///
    /// - Throws: ``TransportError`` (`closed`, `connectionReset`, `system`), `CancellationError`.
    public func write(_ bytes: [UInt8]) async throws {
        try await writeLock.withLock {
            var offset = 0
            while offset < bytes.count {
                let (count, code) = try channel.withDescriptor(operation: "write") { descriptor -> (Int, Int32) in
                    let count = bytes.withUnsafeBytes { raw -> Int in
                        guard let base = raw.baseAddress else { return 0 }
                        return send(descriptor, base + offset, raw.count - offset, sendFlags)
                    }
                    return (count, count < 0 ? errno : 0)
                }
                if count >= 0 {
                    offset += count
                    continue
                }
                switch code {
                case EAGAIN, EWOULDBLOCK: try await channel.writable.wait()
                case EINTR: continue
                case ECONNRESET, EPIPE:
                    throw TransportError(
                        kind: .connectionReset, operation: "write", host: remoteHost, code: code,
                        detail: errnoDescription(code))
                default:
                    throw TransportError(
                        kind: .system, operation: "write", host: remoteHost, code: code,
                        detail: errnoDescription(code))
                }
            }
        }
    }

    #if os(Linux)
        /// Replaces the read-coalescing policy (tests force it on or off).
        func useReadCoalescing(_ settings: ReadCoalescer.Settings) {
            coalescing.withLock { $0.policy = ReadCoalescer(settings: settings) }
        }

        /// Whether the policy coalesces the coming waits.
        var isCoalescingReads: Bool { coalescing.withLock { $0.policy.isCoalescing } }

        /// The socket's `SO_RCVLOWAT` as the kernel reports it, or nil once closed.
        var receiveLowWatermark: Int? {
            try? channel.withDescriptor(operation: "inspect") { descriptor -> Int in
                var mark: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                _ = getsockopt(descriptor, SOL_SOCKET, SO_RCVLOWAT, &mark, &length)
                return Int(mark)
            }
        }

        /// Sets the socket's low-water mark and the reactor's deadline for the coming wait, as the
        /// coalescing policy plans it.
        private func prepareWait() throws(TransportError) {
            try coalescing.withLock { (state: inout CoalescingState) throws(TransportError) in
                let now = monotonicNanoseconds()
                let planned = state.policy.willWait(now: now)
                if planned.lowWatermark != state.socketLowWatermark {
                    var mark = Int32(clamping: planned.lowWatermark)
                    let result = try channel.withDescriptor(operation: "configure") {
                        setsockopt($0, SOL_SOCKET, SO_RCVLOWAT, &mark, socklen_t(MemoryLayout<Int32>.size))
                    }
                    if result == 0 {
                        state.socketLowWatermark = planned.lowWatermark
                    } else if planned.lowWatermark > 1 {
                        // The kernel refuses: never coalesce on this socket.
                        state.policy = ReadCoalescer(settings: .disabled)
                    }
                }
                let deadline = state.policy.plan(planned, onSocketAt: state.socketLowWatermark, now: now).deadline
                if deadline != nil || state.deadlineArmed {
                    channel.wakeReader(at: deadline)
                    state.deadlineArmed = deadline != nil
                }
            }
        }
    #endif

    /// Closes the connection; pending reads and writes fail with ``TransportError/closed``.
    public func close() { channel.close() }

    /// Whether an idle connection can no longer carry a request: the peer closed or reset it, or
    /// sent bytes nobody asked for. Checked without waiting and without consuming anything.
    func isUnusableWhileIdle() -> Bool {
        let unusable = try? channel.withDescriptor(operation: "peek") { descriptor -> Bool in
            var byte: UInt8 = 0
            let count = recv(descriptor, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
            if count < 0 {
                let code = errno
                return !(code == EAGAIN || code == EWOULDBLOCK || code == EINTR)
            }
            return true
        }
        return unusable ?? true
    }
}

/// One resolved socket address.
struct ResolvedAddress: Sendable {
    var family: Int32
    var storage: [UInt8]
    var length: socklen_t
}

/// Resolves `host` off the cooperative pool, since `getaddrinfo` blocks.
///
/// The wait honours cancellation (and so every deadline around it): a cancelled caller gets a
/// `CancellationError` at once, and a lookup that is still running finishes on its own thread and is
/// dropped. `getaddrinfo` itself cannot be interrupted, and a resolver that never answers would otherwise
/// hold a connect past its timeout.
func resolve(
    host: String, port: Int,
    lookup: @escaping @Sendable (String, Int) -> Result<[ResolvedAddress], TransportError> = lookUpAddresses
) async throws -> [ResolvedAddress] {
    let outcome = LockedState<OneShotResolution?>(nil)
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[ResolvedAddress], any Error>) in
            let resolution = OneShotResolution(continuation)
            outcome.withLock { $0 = resolution }
            if Task.isCancelled { resolution.finish(.failure(CancellationError())) }
            DispatchQueue.global().async {
                resolution.finish(lookup(host, port).mapError { $0 })
            }
        }
    } onCancel: {
        outcome.withLock { $0 }?.finish(.failure(CancellationError()))
    }
}

/// A continuation resumed by the first of the lookup and the caller's cancellation.
private final class OneShotResolution: Sendable {
    private let continuation: LockedState<CheckedContinuation<[ResolvedAddress], any Error>?>

    init(_ continuation: CheckedContinuation<[ResolvedAddress], any Error>) {
        self.continuation = LockedState(continuation)
    }

    func finish(_ result: Result<[ResolvedAddress], any Error>) {
        let waiting = continuation.withLock { stored in
            defer { stored = nil }
            return stored
        }
        waiting?.resume(with: result)
    }
}

/// `getaddrinfo` for a stream socket to `host`:`port`; blocks, so it must run off the cooperative pool.
func lookUpAddresses(host: String, port: Int) -> Result<[ResolvedAddress], TransportError> {
    var hints = addrinfo()
    hints.ai_socktype = socketStreamType
    hints.ai_family = AF_UNSPEC
    var list: UnsafeMutablePointer<addrinfo>?
    let status = getaddrinfo(host, String(port), &hints, &list)
    guard status == 0, let first = list else {
        let detail = String(cString: gai_strerror(status))
        return .failure(TransportError(kind: .hostNotFound, operation: "resolve", host: host, detail: detail))
    }
    defer { freeaddrinfo(first) }
    var addresses: [ResolvedAddress] = []
    var cursor: UnsafeMutablePointer<addrinfo>? = first
    while let entry = cursor {
        if let address = entry.pointee.ai_addr {
            let length = Int(entry.pointee.ai_addrlen)
            let bytes = Array(UnsafeRawBufferPointer(start: address, count: length))
            addresses.append(
                ResolvedAddress(family: entry.pointee.ai_family, storage: bytes, length: socklen_t(length)))
        }
        cursor = entry.pointee.ai_next
    }
    return .success(addresses)
}

#if canImport(Glibc)
    @inline(__always) func systemConnect(_ fd: Int32, _ address: UnsafePointer<sockaddr>?, _ length: socklen_t) -> Int32
    {
        Glibc.connect(fd, address, length)
    }
#else
    @inline(__always) func systemConnect(_ fd: Int32, _ address: UnsafePointer<sockaddr>?, _ length: socklen_t) -> Int32
    {
        Darwin.connect(fd, address, length)
    }
#endif

#if os(Linux)
    /// A connection's read-coalescing policy and what it has done to the socket.
    struct CoalescingState: Sendable {
        var policy: ReadCoalescer
        /// The `SO_RCVLOWAT` the socket has now.
        var socketLowWatermark = 1
        /// Whether the reactor holds a deadline for this socket's reader.
        var deadlineArmed = false

        mutating func didRead(count: Int) {
            policy.didRead(count: count, now: monotonicNanoseconds())
        }
    }
#endif
