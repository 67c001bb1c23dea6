import Foundation
import Observation
import Testing
import TidingsCore
import TidingsSandbox

@testable import TidingsOpenMates

/// The `@MainActor` Observation model UIs bind to, against the sandbox in process: the list in the server's
/// order, the status from pending to complete, an opened metadata-only chat from loading to its messages, and
/// the draft.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesViewModelTests {
    /// Waits on the main actor until `predicate` holds, woken by Observation's change tracking (what SwiftUI
    /// uses), never by polling.
    @MainActor static func observe(_ model: OpenMatesViewModel, until predicate: (OpenMatesViewModel) -> Bool) async {
        while !predicate(model) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                withObservationTracking {
                    _ = (model.chats, model.status, model.openChatContent, model.openChatError)
                } onChange: {
                    continuation.resume()
                }
            }
        }
    }

    @MainActor @Test func theModelFollowsTheSyncTheOpenChatAndItsDraft() async throws {
        let server = OpenMatesSandboxServer()
        await server.seed(parents: 14, messagesEach: 4)
        // The oldest chat, pinned: first in the list although last edited.
        var pinned = try #require(await server.chats["chat-013"])
        pinned.pinned = true
        await server.put(pinned)
        var variant = OpenMatesSandboxVariant()
        variant.coldCache = true
        // Never answered: a request for it stays in flight, so the next chat opened waits in a loading state.
        variant.contentNeverAnswered = ["chat-012"]
        await server.setVariant(variant)
        let harness = try OpenMatesClientHarness(server: server)
        let clock = harness.clock
        let model = OpenMatesViewModel(client: harness.client)
        await model.start().value

        await Self.observe(model) { $0.status.connectionStatus == .connected && $0.status.sync == .pending }
        #expect(model.status.syncingIndicator)
        await server.primeCache()
        await Self.observe(model) { $0.status.sync == .complete && $0.chats.count == 14 }
        #expect(!model.status.syncingIndicator && !model.status.offlineBanner)
        #expect(model.chats.map(\.chatID) == ["chat-013"] + (0..<13).map { String(format: "chat-%03d", $0) })

        // chat-012 and chat-011 arrived as metadata only (phase 1b filled the 10 newest parents).
        await model.open("chat-012").value
        #expect(model.isLoadingOpenChat)
        await model.open("chat-011").value
        #expect(model.openChatID == "chat-011")
        #expect(model.openChatContent == .loading(partial: []))
        #expect(model.isLoadingOpenChat && model.messages.isEmpty)
        // The first request's timeout ends it; the queued one goes out and is answered.
        #expect(await clock.waitForSleepers(2))
        await clock.advance(by: .seconds(30))
        await Self.observe(model) { if case .loaded = $0.openChatContent { true } else { false } }
        #expect(!model.isLoadingOpenChat && model.openChatError == nil)
        #expect(model.messages.map(\.messageID) == (0..<4).map { "chat-011-m\($0)" })
        #expect(model.messages.map(\.role) == ["user", "assistant", "user", "assistant"])

        // Another device's draft reaches the open chat.
        #expect(model.draft == nil)
        _ = await server.push(
            "chat_draft_updated",
            ["chat_id": "chat-011", "data": ["encrypted_draft_md": "draft-1"], "versions": ["draft_v": 1]])
        await Self.observe(model) { $0.draft == "draft-1" }
        #expect(model.openChat?.versions.draftV == 1)
        model.stop()
        await harness.client.close()
    }
}
