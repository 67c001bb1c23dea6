import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsNet
import TidingsSandbox
import TidingsSandboxKit

/// The sandbox's user stream, in process: Mastodon's event envelope with a JSON-string payload.
@Suite(.timeLimit(.minutes(1)))
struct MastodonSandboxStreamingTests {
    private struct Event: Decodable {
        var event: String
        var payload: String
    }

    private func next(_ iterator: inout AsyncThrowingStream<WebSocketMessage, any Error>.Iterator) async throws
        -> Event
    {
        guard case .text(let text) = try await iterator.next() else {
            throw MastodonError.decoding
        }
        return try JSONDecoder().decode(Event.self, from: Data(text.utf8))
    }

    @Test func userStreamCarriesUpdatesEditsDeletesAndNotifications() async throws {
        let fixture = await MastodonSandboxFixture()
        let socket = try await fixture.http.connectWebSocketInProcess(
            target: "/api/v1/streaming?stream=user", headers: ["Authorization": "Bearer alice-token"])
        defer { socket.close() }
        await fixture.server.waitForOpenStream()
        var messages = socket.messages.makeAsyncIterator()

        let id = await fixture.server.post(as: fixture.bob, "hello")
        let update = try await next(&messages)
        #expect(update.event == "update")
        let status = try MastodonWire.decode(MastodonStatus.self, from: Data(update.payload.utf8))
        #expect(status.id == ServerID(id))
        #expect(status.content == "hello")

        await fixture.server.edit(id, content: "hello again")
        let edit = try await next(&messages)
        #expect(edit.event == "status.update")
        #expect(try MastodonWire.decode(MastodonStatus.self, from: Data(edit.payload.utf8)).editedAt != nil)

        await fixture.server.delete(id)
        let delete = try await next(&messages)
        #expect(delete.event == "delete")
        #expect(delete.payload == id)

        await fixture.server.post(as: fixture.bob, "hi @alice", mentioning: [fixture.alice])
        #expect(try await next(&messages).event == "update")
        let notification = try await next(&messages)
        #expect(notification.event == "notification")
        #expect(
            try MastodonWire.decode(MastodonNotification.self, from: Data(notification.payload.utf8)).type == .mention)
    }

    @Test func anUnknownTokenIsClosedWithPolicyViolation() async throws {
        let fixture = await MastodonSandboxFixture()
        let socket = try await fixture.http.connectWebSocketInProcess(
            target: "/api/v1/streaming?stream=user", headers: ["Authorization": "Bearer nope"])
        for try await _ in socket.messages {}
        #expect(socket.closeCode == .policyViolation)
        #expect(await fixture.server.openStreamCount == 0)
    }
}
