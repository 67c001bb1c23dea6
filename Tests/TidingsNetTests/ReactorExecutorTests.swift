#if os(Linux)
    import Dispatch
    import Foundation
    import Glibc
    import Testing

    @testable import TidingsNet

    /// Connection readers run on the reactor's thread; they must run there promptly, and still run
    /// somewhere once the reactor has failed.
    @Suite(.timeLimit(.minutes(1))) struct ReactorExecutorTests {
        @Test func aTaskPreferringTheReactorRunsOnItsThreadWhileItSleeps() async throws {
            let reactor = EpollReactor()
            // The reactor waits without a timeout here: only its wake-up pipe lets it see each job.
            for _ in 0..<20 {
                let onReactor = await Task(executorPreference: reactor.executor) { reactor.executor.isCurrentThread }
                    .value
                #expect(onReactor)
            }
        }

        @Test func aReaderResumedByReadinessRunsOnTheReactorThread() async throws {
            var descriptors: [Int32] = [-1, -1]
            #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &descriptors) == 0)
            #expect(configureSocket(descriptors[0]) == 0)
            #expect(configureSocket(descriptors[1]) == 0)
            let reader = TCPConnection(channel: SocketChannel(descriptor: descriptors[0]), remoteHost: "a")
            let writer = TCPConnection(channel: SocketChannel(descriptor: descriptors[1]), remoteHost: "b")
            defer {
                reader.close()
                writer.close()
            }
            let executor = try #require(reader.reactorExecutor as ReactorExecutor?)
            let names = Task(executorPreference: executor) { () -> [String?] in
                let before = executor.isCurrentThread
                let bytes = try? await reader.read()
                return ["\(before)", "\(executor.isCurrentThread)", bytes.map { String(decoding: $0, as: UTF8.self) }]
            }
            try await writer.write(Array("hi".utf8))
            #expect(await names.value == ["true", "true", "hi"])
        }

        @Test func jobsRunElsewhereOnceTheReactorFailed() async throws {
            let release = DispatchSemaphore(value: 0)
            // The reactor's own thread blocks here (ignoring its wake-up pipe) until the test fails it.
            let reactor = EpollReactor(wait: { _, _, _, _ in
                release.wait()
                return (-1, EBADF)
            })
            // Queued while the reactor cannot run it: the failure must hand it on, not strand it.
            // (Creating the task queues its first job at once.)
            let queued = Task(executorPreference: reactor.executor) { 1 }
            release.signal()
            #expect(await queued.value == 1)
            let later = Task(executorPreference: reactor.executor) { reactor.executor.isCurrentThread }
            #expect(await later.value == false)
        }
    }
#endif
