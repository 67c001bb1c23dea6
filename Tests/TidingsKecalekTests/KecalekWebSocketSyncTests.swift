import Foundation
import Testing
import TidingsCore
import TidingsKecalek
import TidingsNet
import TidingsSandbox

/// The same contract over a real loopback WebSocket: handshake, masked client frames, server frames.
@Suite(.timeLimit(.minutes(1))) struct KecalekWebSocketSyncTests {
    private let conversation = KecalekHarness.conversation

    private func webSocketHarness(seeded: Int) async throws -> (KecalekHarness, KecalekSandboxWebSocketServer) {
        let box = EndpointBox()
        let harness = try await KecalekHarness(seeded: seeded) { server in
            let endpoint = try? KecalekSandboxWebSocketServer(server: server)
            box.endpoint = endpoint
            return KecalekWebSocketTransport(
                url: endpoint?.url ?? URL(fileURLWithPath: "/"), token: server.token(for: KecalekHarness.me),
                configuration: WebSocket.Configuration(pingInterval: nil))
        }
        return (harness, try #require(box.endpoint))
    }

    @Test func firstOpenAndReopenOverTheWire() async throws {
        let (harness, endpoint) = try await webSocketHarness(seeded: 50)
        defer { endpoint.stop() }
        let first = await harness.client.messages(conversation: conversation)
        #expect(first.source.isFull)
        #expect(first.messages.count == 50)
        await harness.server.advanceTime(by: .seconds(300))
        // Posted after the first open: the live connection delivers new_message too; the reopen must
        // still ask only for what is newer than the cache and never duplicate.
        await harness.client.close()
        let new = try await harness.server.post(conversation: conversation, from: "bob", text: "přes drát")
        _ = await harness.takeLog()
        let relaunched = KecalekClient(
            configuration: .init(userID: KecalekHarness.me),
            transport: KecalekWebSocketTransport(
                url: endpoint.url, token: harness.server.token(for: KecalekHarness.me),
                configuration: WebSocket.Configuration(pingInterval: nil)),
            cache: harness.cache, decryptor: harness.server.cipher, clock: harness.clock)
        try await relaunched.connect()
        let reopened = await relaunched.messages(conversation: conversation)
        #expect(reopened.source.isIncremental)
        #expect(reopened.newMessageIDs == [new.messageID])
        #expect(reopened.messages.last?.text == "přes drát")
        #expect(await harness.takeLog().map(\.type) == ["get_messages", "get_deleted_since", "mark_read"])
        #expect(Double(reopened.traffic.totalBytes) < 0.10 * Double(first.traffic.totalBytes))
        #expect(await relaunched.totalBytesReceived >= reopened.traffic.bytesReceived)
        await relaunched.close()
    }

    @Test func reconnectOverTheWireFetchesOnlyWhatWasMissed() async throws {
        let (harness, endpoint) = try await webSocketHarness(seeded: 20)
        defer { endpoint.stop() }
        _ = await harness.client.messages(conversation: conversation)
        _ = await harness.takeLog()
        await harness.server.dropAllConnections()
        await harness.recorder.wait { $0 == .connection(.connecting) }
        let missed = try await harness.server.post(conversation: conversation, from: "bob", text: "zmeškané")
        #expect(await harness.clock.waitForSleepers(1))
        await harness.clock.advance(by: .seconds(1))
        await harness.recorder.wait { if case .refreshed = $0 { true } else { false } }
        #expect(
            harness.recorder.contains {
                $0 == .refreshed(conversationID: "general", newMessageIDs: [missed.messageID], deletedMessageIDs: [])
            })
        let log = await harness.takeLog()
        #expect(log.map(\.type) == ["get_messages", "get_deleted_since", "mark_read"])
        #expect(log.first?.since == "2026-02-15T22:00:00.019999")
        await harness.client.close()
    }

    @Test func aDropMidSyncOverTheWireWritesNothingAndNotificationsStillApply() async throws {
        let (harness, endpoint) = try await webSocketHarness(seeded: 10)
        defer { endpoint.stop() }
        let first = await harness.client.messages(conversation: conversation)
        let target = try #require(first.messages.first?.messageID)
        await harness.server.react(conversation: conversation, messageID: target, userID: "bob", emoji: "🔥")
        await harness.recorder.wait { if case .reactionsChanged = $0 { true } else { false } }
        #expect(
            try harness.cache.message(conversationID: conversation, messageID: target)?.reactions.map(\.emoji) == ["🔥"])

        let before = try harness.cache.newestMessages(conversationID: conversation, limit: 100).map(\.messageID)
        await harness.server.inject(.dropConnection, on: "get_deleted_since")
        let page = await harness.client.messages(conversation: conversation)
        #expect(page.source.cacheError == .connectionLost)
        #expect(page.messages.map(\.messageID) == before)
        #expect(try harness.cache.newestMessages(conversationID: conversation, limit: 100).map(\.messageID) == before)
        await harness.client.close()
    }

    @Test func aWrongTokenIsRefusedAtTheHandshake() async throws {
        let server = KecalekSandboxServer(clock: TestClock())
        let endpoint = try KecalekSandboxWebSocketServer(server: server)
        defer { endpoint.stop() }
        let transport = KecalekWebSocketTransport(
            url: endpoint.url, token: "not-a-token", configuration: WebSocket.Configuration(pingInterval: nil))
        await #expect(throws: WebSocketError.self) { _ = try await transport.connect() }
    }
}

final class EndpointBox: Sendable {
    private let state = LockedState<KecalekSandboxWebSocketServer?>(nil)
    var endpoint: KecalekSandboxWebSocketServer? {
        get { state.withLock { $0 } }
        set { state.withLock { $0 = newValue } }
    }
}
