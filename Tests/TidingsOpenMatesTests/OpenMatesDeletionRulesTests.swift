import Testing
import TidingsCore

@testable import TidingsOpenMates

/// The pure rules behind deletions made by another device while this client was offline: which requested chats
/// a content answer shows gone, and when a sync asks to verify the chats it did not account for.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesDeletionRulesTests {
    private func answer(_ payload: [String: JSONValue]) -> OpenMatesContentBatchResponse {
        OpenMatesContentBatchResponse(payload: payload)
    }

    @Test func aRequestedChatWithNoMessagesNoVersionsAndNoPartialErrorIsMissing() {
        let reply = answer([
            "messages_by_chat_id": ["a": [], "e": []],
            "versions_by_chat_id": ["a": ["messages_v": 0, "server_message_count": 0], "b": ["messages_v": 2]],
            "partial_error": ["message": "x", "chat_ids": ["c"]],
        ])
        // "a" exists with no messages (it has versions); "e" is the public server's answer for a deleted chat
        // (an empty list, no versions); "d" is the older form (no key at all).
        #expect(
            OpenMatesSyncApplier.chatsMissing(from: reply, requested: ["a", "b", "c", "d", "d", "e"]) == ["d", "e"])
        #expect(reply.chats.map(\.chatID) == ["a", "b"])
        #expect(reply.chatsWithoutContent == ["e"])
    }

    /// The public server answers a chat it no longer owns with `[]` and no versions entry, and one it failed to
    /// read the same way plus `partial_error: true` (no names): only the first is a deletion.
    @Test func anEmptyListWithoutVersionsIsADeletionUnlessAnUnnamedPartialErrorCameWithIt() {
        let deleted = answer([
            "messages_by_chat_id": ["a": [], "b": ["{}"]], "versions_by_chat_id": ["b": ["messages_v": 1]],
        ])
        #expect(OpenMatesSyncApplier.chatsMissing(from: deleted, requested: ["a", "b"]) == ["a"])
        let failed = answer(["messages_by_chat_id": ["a": []], "partial_error": true])
        #expect(OpenMatesSyncApplier.chatsMissing(from: failed, requested: ["a"]).isEmpty)
        // An empty list for a chat not requested means the answer is not this request's.
        let foreign = answer(["messages_by_chat_id": ["z": []]])
        #expect(OpenMatesSyncApplier.chatsMissing(from: foreign, requested: ["a"]).isEmpty)
    }

    @Test func anAnswerThatNamesAnUnrequestedChatOrAPartialErrorWithoutNamesShowsNothingMissing() {
        let foreign = answer(["messages_by_chat_id": ["z": []]])
        #expect(OpenMatesSyncApplier.chatsMissing(from: foreign, requested: ["a", "b"]).isEmpty)
        let vague = answer(["messages_by_chat_id": ["a": []], "partial_error": "some chats failed"])
        #expect(OpenMatesSyncApplier.chatsMissing(from: vague, requested: ["a", "b"]).isEmpty)
        // An empty answer to a matched request: every requested chat is gone.
        #expect(OpenMatesSyncApplier.chatsMissing(from: answer([:]), requested: ["a", "b"]) == ["a", "b"])
    }

    @Test func anUnmatchedAnswerDeletesNothingAndAMatchedOneTombstonesWhatItLeavesOut() throws {
        var sync = try OpenMatesHarness()
        try sync.apply(OM.phase1(OM.record("a"), recent: [OM.record("b"), OM.record("c")]))
        let reply = OpenMatesServerEvent.chatContentBatch(
            answer(["messages_by_chat_id": ["a": []], "versions_by_chat_id": ["a": ["messages_v": 0]]]))
        let unmatched = sync.applier.plan(reply, view: try sync.store.localView())
        #expect(!unmatched.changes.contains(.deleteChat(chatID: "b")))
        let matched = sync.applier.plan(reply, view: try sync.store.localView(), requestedContent: ["a", "b"])
        #expect(matched.changes.contains(.deleteChat(chatID: "b")))
        #expect(matched.signals.contains(.chatsDeleted(["b"])))
        try sync.store.apply(matched.changes)
        #expect(try sync.store.chat("b") == nil)
        #expect(try sync.store.chat("c") != nil)
        #expect(try sync.store.localView().tombstones == ["b"])
    }

    @Test func aTotalBelowTheStoredChatsAsksToVerifyTheChatsNoPhaseNamed() throws {
        var sync = try OpenMatesHarness()
        try sync.apply(OM.phase1(OM.record("a"), recent: ["b", "c", "d", "e"].map { OM.record($0) }))
        sync.applier.startSync()
        // A new sync names a and b (phase 2 leaves out the chats the client has up to date), total 3 of 5.
        let signals = try sync.apply(
            OM.phase1(OM.record("a"), recent: [OM.record("b")]), OM.phase2([], total: 3),
            .phasedSyncComplete(phase: "all"))
        #expect(signals.contains(.verifyChats(chatIDs: ["c", "d", "e"], serverTotal: 3)))
        // A missing chat alone deletes nothing, and a total that covers the store asks for nothing.
        #expect(try sync.store.chatList().count == 5)
        sync.applier.startSync()
        let covered = try sync.apply(OM.phase2([], total: 5), .phasedSyncComplete(phase: "all"))
        #expect(!covered.contains { if case .verifyChats = $0 { true } else { false } })
    }
}
