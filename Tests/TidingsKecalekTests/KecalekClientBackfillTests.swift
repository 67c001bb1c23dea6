import Foundation
import Testing
import TidingsCore
import TidingsKecalek
import TidingsSandbox

/// `fetchAll` pages through a whole conversation and always ends.
@Suite(.timeLimit(.minutes(1))) struct KecalekClientBackfillTests {
    @Test func fetchAllStoresEveryPage() async throws {
        let harness = try await KecalekHarness(seeded: 25)
        let backfill = await harness.client.fetchAll(conversation: KecalekHarness.conversation, pageSize: 10)
        #expect(backfill.failure == nil)
        #expect(backfill.stored == 25)
        #expect(backfill.traffic.requests.map(\.offset) == [0, 10, 20])
        #expect(try harness.cache.messageCount(conversationID: KecalekHarness.conversation) == 25)
    }

    @Test func aServerIgnoringTheOffsetEndsTheFetchWithAServerError() async throws {
        let harness = try await KecalekHarness(seeded: 25) { server in
            OffsetIgnoringTransport(base: server.transport(userID: KecalekHarness.me))
        }
        let backfill = await harness.client.fetchAll(conversation: KecalekHarness.conversation, pageSize: 10)
        #expect(backfill.failure == .server)
        #expect(backfill.failure?.description.contains("offset 10") == true)
        #expect(backfill.stored == 10)
        #expect(backfill.traffic.requests.count == 2)
        #expect(try harness.cache.messageCount(conversationID: KecalekHarness.conversation) == 10)
    }
}

/// Rewrites every request's `offset` to 0, as a server that ignores it would answer.
private struct OffsetIgnoringTransport: KecalekTransport {
    let base: any KecalekTransport

    func connect() async throws -> KecalekChannel {
        let channel = try await base.connect()
        return KecalekChannel(
            inbound: channel.inbound,
            send: { frame in
                guard var request = try? KecalekRequest(frame: frame), request.parameters["offset"] != nil else {
                    try await channel.send(frame)
                    return
                }
                request.parameters["offset"] = 0
                try await channel.send(request.encoded())
            },
            close: channel.close)
    }
}
