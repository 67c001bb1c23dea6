import Foundation
import Testing
import TidingsCore
import TidingsKecalek
import TidingsSandbox

/// `mark_read` keeps to what the user could have seen (issue 9): against a one-second server an incremental
/// sync asks from one second before its point, so a whole burst in the point's second comes again. Its part
/// older than the cached window was never shown, and must not be marked read.
@Suite(.timeLimit(.minutes(1))) struct KecalekMarkReadWindowTests {
    private let conversation = KecalekHarness.conversation

    @Test func aRefetchedBurstMarksReadOnlyWhatThePageShowsOrIsNewerThanTheSyncPoint() async throws {
        let harness = try await KecalekHarness(reconnects: false)
        await harness.client.close()
        let server = harness.server
        await server.setVariant(.init(resolution: .second, notifications: .none))
        // 40 messages from bob, all in one second: the first open shows and marks the newest 10.
        for index in 0..<40 { try await server.post(conversation: conversation, from: "bob", text: "burst \(index)") }
        let burst = await server.messageIDs(conversation: conversation)

        let first = try await harness.relaunch()
        let opened = await first.messages(conversation: conversation, limit: 10)
        await first.close()
        #expect(opened.source.isFull)
        #expect(opened.markedRead == Array(burst.suffix(10)))

        // One more in the same second (shown by the next page), and one a second later (newer than the point).
        let sameSecond = try await server.post(conversation: conversation, from: "carol", text: "same second")
        await server.advanceTime(by: .seconds(1))
        let later = try await server.post(conversation: conversation, from: "carol", text: "a second later")

        let second = try await harness.relaunch()
        let page = await second.messages(conversation: conversation, limit: 10)
        await second.close()
        #expect(page.source.isIncremental)
        #expect(!page.gapRemains)
        #expect(Set(page.markedRead) == [sameSecond.messageID, later.messageID])
        for id in burst.prefix(30) {
            let readBy = await server.message(conversation: conversation, messageID: id)?.readBy ?? []
            #expect(!readBy.contains { $0.userID == KecalekHarness.me }, "\(id) was never shown but is marked read")
        }
        #expect(await server.redundantReadMarks.isEmpty)
    }
}
