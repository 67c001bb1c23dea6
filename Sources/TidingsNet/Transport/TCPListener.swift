import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A `TCPListener` accepts TCP connections on an IPv4 address, for loopback servers in tests,
/// the sandbox and the demo.
///
/// `accept()` suspends the calling task (never a thread) until a client connects. For example:
///
/// ```swift
/// let listener = try TCPListener.bind(port: 0)   // 127.0.0.1, a free port
/// print(listener.port)
/// let connection = try await listener.accept()
/// ```
public final class TCPListener: Sendable {
    private let channel: SocketChannel
    /// The port the listener is bound to (the one the kernel picked when asked for port 0).
    public let port: Int
    /// The IPv4 address the listener is bound to.
    public let host: String

    private init(channel: SocketChannel, host: String, port: Int) {
        self.channel = channel
        self.host = host
        self.port = port
    }

    deinit { channel.close() }

    /// Binds and listens on `host`:`port`.
    ///
    /// - Parameters:
    ///   - host: an IPv4 literal; the default keeps the listener on loopback.
    ///   - port: the port, or 0 for a free one (read it back from ``port``).
    ///   - backlog: how many not-yet-accepted connections the kernel queues.
    /// - Throws: ``TransportError`` (`system`) when the address is invalid or in use.
    public static func bind(host: String = "127.0.0.1", port: Int = 0, backlog: Int32 = 128) throws -> TCPListener {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(clamping: port)).bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            throw TransportError(kind: .system, operation: "bind", host: host, detail: "not an IPv4 address")
        }
        let descriptor = socket(AF_INET, socketStreamType, 0)
        guard descriptor >= 0 else { throw TransportError(kind: .system, operation: "socket", host: host, code: errno) }
        var one: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let configureError = configureSocket(descriptor)
        let channel = SocketChannel(descriptor: descriptor)
        guard configureError == 0 else {
            channel.close()
            throw TransportError(kind: .system, operation: "fcntl", host: host, code: configureError)
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                systemBind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(descriptor, backlog) == 0 else {
            let code = errno
            channel.close()
            throw TransportError(
                kind: .system, operation: "bind", host: "\(host):\(port)", code: code, detail: errnoDescription(code))
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return TCPListener(channel: channel, host: host, port: Int(UInt16(bigEndian: actual.sin_port)))
    }

    /// Waits for the next client and returns its connection.
    ///
    /// - Throws: ``TransportError`` (`closed` once ``close()`` was called, `system`), `CancellationError`.
    public func accept() async throws -> TCPConnection {
        while true {
            var peer = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let (descriptor, code) = try channel.withDescriptor(operation: "accept") { listening -> (Int32, Int32) in
                let descriptor = withUnsafeMutablePointer(to: &peer) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { systemAccept(listening, $0, &length) }
                }
                return (descriptor, descriptor < 0 ? errno : 0)
            }
            if descriptor >= 0 {
                let configureError = configureSocket(descriptor)
                guard configureError == 0 else {
                    _ = systemClose(descriptor)
                    continue
                }
                var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
                _ = inet_ntop(AF_INET, &peer.sin_addr, &text, socklen_t(text.count))
                let host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                return TCPConnection(channel: SocketChannel(descriptor: descriptor), remoteHost: host)
            }
            switch code {
            case EAGAIN, EWOULDBLOCK: try await channel.readable.wait()
            case EINTR, ECONNABORTED, EPROTO: continue
            default:
                throw TransportError(
                    kind: .system, operation: "accept", host: host, code: code, detail: errnoDescription(code))
            }
        }
    }

    /// Stops listening; a pending ``accept()`` fails with ``TransportError/closed``.
    public func close() { channel.close() }
}

#if canImport(Glibc)
    func systemBind(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
        Glibc.bind(fd, address, length)
    }
    func systemAccept(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>, _ length: inout socklen_t) -> Int32 {
        Glibc.accept(fd, address, &length)
    }
#else
    func systemBind(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
        Darwin.bind(fd, address, length)
    }
    func systemAccept(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>, _ length: inout socklen_t) -> Int32 {
        Darwin.accept(fd, address, &length)
    }
#endif
