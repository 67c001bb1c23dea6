import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

func systemClose(_ descriptor: Int32) -> Int32 {
    #if canImport(Glibc)
        Glibc.close(descriptor)
    #else
        Darwin.close(descriptor)
    #endif
}

/// Puts a descriptor in non-blocking, close-on-exec mode and disables SIGPIPE where the platform
/// needs a socket option for it.
func configureSocket(_ descriptor: Int32) -> Int32 {
    let flags = fcntl(descriptor, F_GETFL, 0)
    guard flags >= 0, fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) == 0 else { return errno }
    _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
    #if canImport(Darwin)
        var one: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
    #endif
    return 0
}

#if canImport(Glibc)
    let socketStreamType = Int32(SOCK_STREAM.rawValue)
    let sendFlags = Int32(MSG_NOSIGNAL)
#else
    let socketStreamType = SOCK_STREAM
    let sendFlags: Int32 = 0
#endif

func errnoDescription(_ code: Int32) -> String { String(cString: strerror(code)) }
