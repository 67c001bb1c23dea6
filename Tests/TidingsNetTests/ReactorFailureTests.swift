#if os(Linux)
    import Dispatch
    import Foundation
    import Glibc
    import Testing

    @testable import TidingsNet

    /// A reactor whose `epoll_wait` fails must fail every connection it serves, not leave them
    /// silently waiting forever.
    @Suite(.timeLimit(.minutes(1))) struct ReactorFailureTests {
        /// A connected pair of non-blocking stream sockets served by `reactor`.
        static func pair(on reactor: EpollReactor) throws -> (TCPConnection, TCPConnection) {
            var descriptors: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &descriptors) == 0 else {
                throw TransportError(kind: .system, operation: "socketpair", code: errno)
            }
            #expect(configureSocket(descriptors[0]) == 0)
            #expect(configureSocket(descriptors[1]) == 0)
            return (
                TCPConnection(channel: SocketChannel(descriptor: descriptors[0], reactor: reactor), remoteHost: "a"),
                TCPConnection(channel: SocketChannel(descriptor: descriptors[1], reactor: reactor), remoteHost: "b")
            )
        }

        static func isReactorFailure(_ error: any Error) -> Bool {
            guard let error = error as? TransportError else { return false }
            return error == .system && error.operation == "poll" && error.errno == EBADF
        }

        @Test func anEpollFailureFailsEveryPendingAndLaterRead() async throws {
            let release = DispatchSemaphore(value: 0)
            // The reactor's own thread blocks here (never a pool thread) until the test fails it.
            let reactor = EpollReactor(wait: { _, _, _, _ in
                release.wait()
                return (-1, EBADF)
            })
            let (first, second) = try Self.pair(on: reactor)
            defer {
                first.close()
                second.close()
            }
            // Data still flows before the failure; nothing more after it can be waited for.
            try await first.write(Array("hello".utf8))
            #expect(try await second.read() == Array("hello".utf8))
            let pendingReads = [first, second].map { connection in Task { try await connection.read() } }
            release.signal()
            for read in pendingReads {
                await #expect(performing: { _ = try await read.value }, throws: Self.isReactorFailure)
            }
            // A connection made after the failure fails at its first wait instead of hanging.
            let (late, other) = try Self.pair(on: reactor)
            defer {
                late.close()
                other.close()
            }
            await #expect(performing: { _ = try await late.read() }, throws: Self.isReactorFailure)
        }
    }
#endif
