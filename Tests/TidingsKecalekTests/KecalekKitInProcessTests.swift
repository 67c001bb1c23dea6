import Foundation
import Testing
import TidingsCore
import TidingsKecalek
import TidingsNet
import TidingsSandbox

/// The Kecalek sandbox endpoint reached through the kit's in-memory WebSocket pair (no socket).
@Suite(.timeLimit(.minutes(1))) struct KecalekKitInProcessTests {
    @Test func syncsThroughTheKitsInMemoryPair() async throws {
        let box = EndpointBox()
        let harness = try await KecalekHarness(seeded: 30) { server in
            let endpoint = try? KecalekSandboxWebSocketServer(server: server)
            box.endpoint = endpoint
            guard let endpoint else { return server.transport(userID: KecalekHarness.me) }
            return endpoint.inProcessTransport(token: server.token(for: KecalekHarness.me))
        }
        let endpoint = try #require(box.endpoint)
        defer { endpoint.stop() }
        let page = await harness.client.messages(conversation: KecalekHarness.conversation)
        #expect(page.source.isFull)
        #expect(page.messages.count == 30)
        #expect(await harness.takeLog().map(\.type) == ["get_messages", "mark_read"])
        await harness.client.close()
    }

    @Test func aWrongTokenIsRefusedAsOverTheSocket() async throws {
        let server = KecalekSandboxServer(clock: TestClock())
        let endpoint = try KecalekSandboxWebSocketServer(server: server)
        defer { endpoint.stop() }
        do {
            _ = try await endpoint.inProcessTransport(token: "not-a-token").connect()
            Issue.record("connected with a wrong token")
        } catch let error as WebSocketError {
            #expect(error.httpStatus == 401)
        }
    }
}
