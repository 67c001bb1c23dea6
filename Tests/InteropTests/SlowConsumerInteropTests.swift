import Foundation
import PeerSupport
import Testing

@testable import TidingsNet

/// Real servers flooding a client whose consumer lags: the client holds at most its configured
/// buffer, whatever the server sends, and still delivers everything in order.
@Suite(.timeLimit(.minutes(2))) struct SlowConsumerInteropTests {
    /// Runs `body` with a started peer and stops the peer on a thread of its own afterwards:
    /// `PythonPeer.stop()` waits for the process, which must not block the test pool.
    static func withPeer(_ script: String, _ body: (PythonPeer) async throws -> Void) async throws {
        let peer = try await PythonPeer.start(script)
        let outcome: Result<Void, any Error>
        do {
            try await body(peer)
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                peer.stop()
                done.resume()
            }
        }
        try outcome.get()
    }

    /// Gives every other task plenty of turns: an unbounded reader would keep buffering meanwhile.
    static func letOthersRun() async {
        for _ in 0..<5_000 { await Task.yield() }
    }

    @Test func aFloodingWebSocketServerIsHeldBackByTheConsumer() async throws {
        try await Self.withPeer("ws_peer.py") { peer in
            let count = 4_000
            let size = 8 * 1024
            let url = URL(string: "ws://127.0.0.1:\(peer.port)/flood/\(count)/\(size)")!
            let socket = try await WebSocket.connect(
                to: url, configuration: WebSocket.Configuration(maximumBufferedMessages: 16, pingInterval: nil))
            // 32 MiB are on their way; the buffer fills, then the socket is no longer read.
            while socket.bufferedMessages.count < 16 {
                try Task.checkCancellation()
                await Task.yield()
            }
            await Self.letOthersRun()
            #expect(socket.bufferedMessages.count <= 16)
            var next = 0
            for try await message in socket.messages {
                guard case .binary(let bytes) = message, bytes.count == size else {
                    Issue.record("unexpected message \(next)")
                    break
                }
                let index = bytes.prefix(4).reduce(0) { $0 << 8 | Int($1) }
                #expect(index == next)
                next += 1
                if next == count { break }
            }
            #expect(next == count)
            #expect(socket.bufferedMessages.peak <= 16)
            await socket.close()
        }
    }

    @Test(arguments: [EngineIOClient.Transports.polling, .webSocket])
    func aFloodingSocketIOServerIsHeldBackByTheApp(_ transports: EngineIOClient.Transports) async throws {
        try await Self.withPeer("socketio_server.py") { server in
            let client = SocketIOClient(
                url: server.url, transports: transports, configuration: .init(maximumBufferedEvents: 16))
            try await client.connect()
            let count = 3_000
            try await client.emit("burst", .int(Int64(count)))
            while client.bufferedEvents.count < 16 {
                try Task.checkCancellation()
                await Task.yield()
            }
            await Self.letOthersRun()
            // `connect` plus at most 16 events.
            #expect(client.bufferedEvents.count <= 17)
            // And the Engine.IO session below holds back too, instead of buffering the flood itself.
            let engineLimit = EngineIOClient.Configuration(url: server.url).maximumBufferedMessages
            let below = try #require(await client.sessionBufferedMessages)
            #expect(below.peak <= engineLimit)
            var ticks = 0
            for await event in client.events {
                guard case .event("tick", let arguments, _) = event else { continue }
                #expect(arguments.first?.intValue == ticks)
                ticks += 1
                if ticks == count { break }
            }
            #expect(ticks == count)
            #expect(client.bufferedEvents.peak <= 17)
            #expect(try #require(await client.sessionBufferedMessages).peak <= engineLimit)
            await client.disconnect()
        }
    }
}
