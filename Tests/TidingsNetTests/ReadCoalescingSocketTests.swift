#if os(Linux)
    import Glibc
    import Testing

    @testable import TidingsNet

    /// Coalesced reads on a real loopback TCP connection: the kernel holds small messages back until a
    /// low-water mark, and the reactor's deadline must still hand over whatever arrived below it.
    @Suite(.timeLimit(.minutes(1))) struct ReadCoalescingSocketTests {
        /// Settings that coalesce after one read that followed a wait, asking for 64 bytes and stopping
        /// after a wait that brought less than that.
        static let eager = ReadCoalescer.Settings(
            denseGap: .max, entryStreak: 1, readsPerWake: 64, minimumReadsPerWait: 64, maximumDelay: 2_000_000)

        /// A connected reader (with `settings`) and writer on loopback.
        func connectedPair(_ settings: ReadCoalescer.Settings) async throws -> (TCPConnection, TCPConnection) {
            let listener = try TCPListener.bind()
            defer { listener.close() }
            async let accepted = listener.accept()
            let reader = try await TCPConnection.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(5))
            let writer = try await accepted
            reader.useReadCoalescing(settings)
            return (reader, writer)
        }

        /// Writes one byte per round until a read that waited for it started coalescing.
        func startCoalescing(_ reader: TCPConnection, _ writer: TCPConnection) async throws {
            for _ in 0..<1_000 where !reader.isCoalescingReads {
                let read = Task { try await reader.read() }
                await Task.yield()
                try await writer.write([1])
                #expect(try await read.value == [1])
            }
            try #require(reader.isCoalescingReads)
        }

        /// Yields until the reader's socket has `mark` as its low-water mark (set just before it waits).
        func untilLowWatermark(_ reader: TCPConnection, is mark: Int) async {
            while reader.receiveLowWatermark != mark { await Task.yield() }
        }

        @Test func bytesBelowTheLowWatermarkArriveAtTheDeadlineAndTheNextWaitIsOrdinary() async throws {
            let (reader, writer) = try await connectedPair(Self.eager)
            defer {
                reader.close()
                writer.close()
            }
            try await startCoalescing(reader, writer)
            // The reader now waits for 64 bytes; 10 never reach the mark, so only the deadline can
            // hand them over. Without it this read would wait for ever.
            let coalesced = Task { try await reader.read() }
            await untilLowWatermark(reader, is: 64)
            try await writer.write(Array(0..<10))
            #expect(try await coalesced.value == Array(0..<10))
            // A coalesced wait that ended at its deadline short of the mark ends coalescing: the
            // socket goes back to waking for every byte and the next wait has no deadline.
            #expect(!reader.isCoalescingReads)
            let ordinary = Task { try await reader.read() }
            await untilLowWatermark(reader, is: 1)
            try await writer.write([42])
            #expect(try await ordinary.value == [42])
        }

        @Test func aPeerThatClosesDuringACoalescedWaitEndsTheReadAtOnce() async throws {
            var settings = Self.eager
            // A deadline far beyond the test's limit: only the kernel's end-of-stream wake-up can end this read.
            settings.maximumDelay = 3_600_000_000_000
            let (reader, writer) = try await connectedPair(settings)
            defer { reader.close() }
            try await startCoalescing(reader, writer)
            let coalesced = Task { try await reader.read() }
            await untilLowWatermark(reader, is: 64)
            try await writer.write([7, 7])
            writer.close()
            var received: [UInt8] = []
            while true {
                let bytes = try await received.isEmpty ? coalesced.value : reader.read()
                if bytes.isEmpty { break }
                received += bytes
            }
            #expect(received == [7, 7])
        }

        @Test func aDisabledPolicyNeverTouchesTheSocket() async throws {
            let (reader, writer) = try await connectedPair(.disabled)
            defer {
                reader.close()
                writer.close()
            }
            for index in 0..<50 {
                let read = Task { try await reader.read() }
                await Task.yield()
                try await writer.write([UInt8(index)])
                #expect(try await read.value == [UInt8(index)])
            }
            #expect(!reader.isCoalescingReads)
            #expect(reader.receiveLowWatermark == 1)
        }
    }
#endif
