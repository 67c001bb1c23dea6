import Testing
import TidingsCore

@testable import TidingsNet

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The rule every socket channel relies on: no system call reaches a descriptor once it is closed,
/// since the kernel may already have given its number to another file.
@Suite(.timeLimit(.minutes(1))) struct GuardedDescriptorTests {
    private func makePipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        return (ends[0], ends[1])
    }

    @Test func closingRunsItsBodyOnceAndLaterCallsFailWithClosed() throws {
        let ends = try makePipe()
        defer { _ = systemClose(ends.write) }
        let guarded = GuardedDescriptor(ends.read)
        #expect(try guarded.withDescriptor(operation: "probe") { $0 } == ends.read)
        let closings = LockedState<[Int32]>([])
        #expect(guarded.close { descriptor in closings.withLock { $0.append(descriptor) } })
        #expect(!guarded.close { descriptor in closings.withLock { $0.append(descriptor) } })
        _ = systemClose(ends.read)
        #expect(closings.withLock { $0 } == [ends.read])
        #expect(guarded.isClosed)
        let reached = LockedState(false)
        #expect(throws: TransportError.closed) {
            try guarded.withDescriptor(operation: "read") { _ in reached.withLock { $0 = true } }
        }
        #expect(!reached.withLock { $0 })
    }

    @Test func noCallRunsAfterAConcurrentClose() async throws {
        let ends = try makePipe()
        defer { _ = systemClose(ends.write) }
        let guarded = GuardedDescriptor(ends.read)
        // Every event in the order the lock admitted it: calls, then the close, then nothing but refusals.
        let events = LockedState<[String]>([])
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask {
                    if index == 100 {
                        guarded.close { descriptor in
                            events.withLock { $0.append("close") }
                            _ = systemClose(descriptor)
                        }
                    } else {
                        _ = try? guarded.withDescriptor(operation: "probe") { descriptor in
                            events.withLock {
                                $0.append(fcntl(descriptor, F_GETFD) >= 0 ? "call" : "call on a closed fd")
                            }
                        }
                    }
                }
            }
        }
        let log = events.withLock { $0 }
        let closeIndex = try #require(log.firstIndex(of: "close"))
        #expect(log.filter { $0 == "close" }.count == 1)
        #expect(log[..<closeIndex].allSatisfy { $0 == "call" })
        #expect(log.count == closeIndex + 1)
    }
}
