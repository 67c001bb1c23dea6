import Foundation
import Testing
import TidingsCore

@testable import TidingsNet

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite(.timeLimit(.minutes(1))) struct SocketTransportTests {
    @Test func bytesTravelBothWaysAndCloseIsSeenAsEndOfStream() async throws {
        let listener = try TCPListener.bind(port: 0)
        #expect(listener.port > 0)
        async let accepted = listener.accept()
        let client = try await TCPConnection.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(10))
        let server = try await accepted
        try await client.write(Array("hello".utf8))
        var received: [UInt8] = []
        while received.count < 5 { received += try await server.read() }
        #expect(received == Array("hello".utf8))
        try await server.write([1, 2, 3])
        var back: [UInt8] = []
        while back.count < 3 { back += try await client.read() }
        #expect(back == [1, 2, 3])
        client.close()
        #expect(try await server.read() == [])
        server.close()
        listener.close()
    }

    @Test func bytesFollowedAtOnceByCloseAreReadToTheEndOfStream() async throws {
        // Data and the FIN often arrive together and wake a parked reader once; `read()` returns the
        // data first and must still see the end of the stream next, not wait for another wake-up.
        let listener = try TCPListener.bind(port: 0)
        for round in 0..<50 {
            async let accepted = listener.accept()
            let client = try await TCPConnection.connect(host: "127.0.0.1", port: listener.port)
            let server = try await accepted
            // A first short read leaves the reader with an empty receive queue, as in a conversation.
            try await server.write([0])
            #expect(try await client.read() == [0])
            let rest = Task {
                var received: [UInt8] = []
                while true {
                    let chunk = try await client.read()
                    if chunk.isEmpty { return received }
                    received += chunk
                }
            }
            try await server.write([UInt8(truncatingIfNeeded: round), 1, 2])
            server.close()
            #expect(try await rest.value == [UInt8(truncatingIfNeeded: round), 1, 2])
            client.close()
        }
        listener.close()
    }

    @Test func aLargeWriteCompletesWhileTheReaderDrainsSlowly() async throws {
        let (_, client, server) = try await loopbackPair(host: "localhost")
        // 8 MiB is far more than the socket buffers hold, so the writer must wait for writability.
        let payload = (0..<(8 * 1024 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        async let written: Void = client.write(payload)
        var received: [UInt8] = []
        received.reserveCapacity(payload.count)
        while received.count < payload.count {
            let chunk = try await server.read()
            #expect(!chunk.isEmpty)
            if chunk.isEmpty { break }
            received += chunk
        }
        try await written
        #expect(received == payload)
    }

    @Test func closingWakesAPendingReadWithClosed() async throws {
        let (_, client, server) = try await loopbackPair()
        let reader = Task { try await client.read() }
        // The read is parked on the reactor; closing must wake it rather than leave it hanging.
        client.close()
        await #expect(throws: TransportError.self) { _ = try await reader.value }
        server.close()
    }

    @Test func cancellingAPendingReadThrowsCancellationError() async throws {
        let (_, client, server) = try await loopbackPair()
        let reader = Task { try await client.read() }
        reader.cancel()
        await #expect(throws: CancellationError.self) { _ = try await reader.value }
        // No bytes were lost: the connection still reads what comes next.
        try await server.write([42])
        #expect(try await client.read() == [42])
        client.close()
        server.close()
    }

    @Test func aSecondConcurrentReadIsRefused() async throws {
        let (_, client, server) = try await loopbackPair()
        try await withThrowingTaskGroup(of: [UInt8]?.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    do {
                        return try await client.read()
                    } catch let error as TransportError where error == .concurrentRead {
                        return nil
                    }
                }
            }
            // Nothing was sent yet, so the first to finish must be the refused reader.
            #expect(try await group.next() == .some(nil))
            try await server.write([7])
            #expect(try await group.next() == .some([7]))
        }
        client.close()
        server.close()
    }

    @Test func connectingToAClosedPortIsRefused() async throws {
        // A port bound but not listening refuses connections, and stays ours while the test runs: a listener
        // closed first could see its port taken by another test's listener in between (which then accepted
        // this connection and hung that test).
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(descriptor, address, length) == 0 && getsockname(descriptor, address, &length) == 0
            }
        }
        try #require(bound)
        let port = Int(UInt16(bigEndian: address.sin_port))
        await #expect {
            _ = try await TCPConnection.connect(host: "127.0.0.1", port: port)
        } throws: { error in
            (error as? TransportError) == .connectionRefused
        }
    }

    @Test func anUnknownHostIsHostNotFound() async throws {
        await #expect {
            _ = try await TCPConnection.connect(host: "no-such-host.invalid", port: 80)
        } throws: { error in
            (error as? TransportError) == .hostNotFound
        }
    }

    @Test func closingTheListenerWakesAPendingAccept() async throws {
        let listener = try TCPListener.bind(port: 0)
        let acceptor = Task { try await listener.accept() }
        listener.close()
        await #expect {
            _ = try await acceptor.value
        } throws: { error in
            (error as? TransportError) == .closed
        }
    }

    @Test func aTimeoutOnTheVirtualClockCancelsTheOperation() async throws {
        let clock = TestClock()
        let listener = try TCPListener.bind(port: 0)
        let attempt = Task {
            try await withTimeout(
                .seconds(5), clock: clock, timeoutError: { TransportError(kind: .timedOut, operation: "accept") }
            ) { try await listener.accept() }
        }
        // Nobody connects; only virtual time passes.
        #expect(await clock.waitForSleepers(1))
        await clock.advance(by: .seconds(4))
        #expect(clock.pendingSleepers == 1)
        await clock.advance(by: .seconds(1))
        await #expect {
            _ = try await attempt.value
        } throws: { error in
            (error as? TransportError) == .timedOut
        }
        listener.close()
    }
}
