import Testing
import TidingsCore

@testable import TidingsOpenMates

/// The phased-sync rules, one by one, against a real (in-memory) store.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesSyncRulesTests {
    @Test func phase1StoresMetadataSuggestionsAndInspirationsAndNullMessagesKeepLocalContent() throws {
        var sync = try OpenMatesHarness()
        try sync.apply(OM.phase1b([OM.content("c1", [OM.message("m1")], v: 1)]))
        let phase1 = OpenMatesServerEvent(
            OpenMatesEnvelope(
                type: "phase_1_last_chat_ready",
                payload: [
                    "chat_id": "c1", "phase": "phase1", "messages": .null,
                    "chat_details": ["chat_id": "c1", "messages_v": 1, "title_v": 2, "encrypted_title": "T"],
                    "recent_chat_metadata": [["chat_id": "c2", "messages_v": 3, "title_v": 1]],
                    "new_chat_suggestions": [["id": "s1"], ["id": "s2"]],
                    "daily_inspirations": [["inspiration_id": "d1"]],
                ]))
        let signals = try sync.apply(phase1)
        #expect(signals == [.phaseArrived("phase1")])
        #expect(try sync.messageIDs("c1") == ["m1"])
        #expect(try sync.store.chat("c1")?.chat.encryptedTitle == "T")
        #expect(try sync.store.chat("c2")?.content.isMetadataOnly == true)
        #expect(try sync.store.count(.suggestions) == 2)
        #expect(try sync.store.count(.dailyInspirations) == 1)
        #expect(try sync.store.clientState().suggestionsCount == 2)
    }

    @Test func phase1bFillsAtMostTenParentChatsAndSubChatsDoNotCount() throws {
        var sync = try OpenMatesHarness()
        let parents = (1...12).map { OM.record("p\($0)") }
        let subs = (1...3).map { OM.record("s\($0)", parent: "p1") }
        try sync.apply(OM.phase1(parents[0], recent: Array(parents.dropFirst()) + subs))
        let contents = (parents + subs).map { OM.content($0.chatID, [OM.message("m-\($0.chatID)")]) }
        let signals = try sync.apply(OM.phase1b(contents))
        #expect(signals == [.overCap(["p11", "p12"]), .phaseArrived("phase1b")])
        for index in 1...10 { #expect(try sync.messageIDs("p\(index)") == ["m-p\(index)"]) }
        for index in 1...3 { #expect(try sync.messageIDs("s\(index)") == ["m-s\(index)"]) }
        #expect(try sync.store.chat("p11")?.content.isMetadataOnly == true)
        #expect(try sync.store.chat("p12")?.content.isMetadataOnly == true)
    }

    @Test func phase1bNullMessagesKeepLocalAndEmptyListClearsIt() throws {
        var sync = try OpenMatesHarness()
        try sync.apply(OM.phase1b([OM.content("c", [OM.message("a"), OM.message("b")], v: 1)]))
        try sync.apply(OM.phase1b([OM.content("c", nil, v: 2)]))
        #expect(try sync.messageIDs("c") == ["a", "b"])
        try sync.apply(OM.phase1b([OM.content("c", [], v: 3)]))
        #expect(try sync.messageIDs("c") == [])
        #expect(try sync.store.chat("c")?.content.isMetadataOnly == false)
    }

    @Test func phase2IsMetadataOnlyAndNeverClearsLocalContent() throws {
        var sync = try OpenMatesHarness()
        try sync.apply(OM.phase1b([OM.content("c", [OM.message("a")], v: 1, count: 1)]))
        try sync.apply(OM.phase2([OM.record("c", messagesV: 2, titleV: 5, title: "new"), OM.record("d")], total: 2))
        #expect(try sync.messageIDs("c") == ["a"])
        let stored = try #require(try sync.store.chat("c"))
        #expect(stored.chat.encryptedTitle == "new")
        #expect(stored.chat.versions.messagesV == 2)
        // The content is at version 1 while the chat is at 2: partial, not final.
        #expect(!stored.content.isComplete(currentMessagesV: stored.chat.versions.messagesV))
        #expect(try sync.store.chat("d")?.content.isMetadataOnly == true)
        #expect(try sync.messageIDs("d") == [])
    }

    @Test func aChatMissingFromPhase2IsNeverDeleted() throws {
        var sync = try OpenMatesHarness()
        try sync.apply(OM.phase2([OM.record("a"), OM.record("b")]))
        try sync.apply(OM.phase2([OM.record("a", messagesV: 2)], total: 1))
        #expect(try sync.store.chatList().map(\.chatID).sorted() == ["a", "b"])
    }

    @Test func deletionsComeOnlyFromChatDeletedOrInitialSyncAndTombstonesBlockResurrection() throws {
        var sync = try OpenMatesHarness()
        try sync.apply(OM.phase2([OM.record("a"), OM.record("b"), OM.record("c")]))
        try sync.apply(.chatDeleted(chatID: "a"))
        let initial = OpenMatesServerEvent(
            OpenMatesEnvelope(type: "initial_sync_response", payload: ["chat_ids_to_delete": ["b"]]))
        try sync.apply(initial)
        #expect(try sync.store.chatList().map(\.chatID) == ["c"])
        // A stale phase record or content for a deleted chat does not bring it back.
        try sync.apply(
            OM.phase2([OM.record("a", messagesV: 9, titleV: 9)]), OM.phase1b([OM.content("b", [OM.message("x")])]))
        try sync.apply(.newChatMessage(chatID: "a", message: OM.message("y"), messagesV: 10, lastEdited: nil))
        #expect(try sync.store.chatList().map(\.chatID) == ["c"])
        #expect(try sync.store.count(.messages) == 0)
    }

    @Test func newerVersionReplacesOlderIsIgnoredEqualOnlyFillsBlanks() throws {
        var sync = try OpenMatesHarness()
        try sync.apply(.chatUpdate(OM.record("c", titleV: 3, title: "three")))
        try sync.apply(.chatUpdate(OM.record("c", titleV: 2, title: "two")))
        #expect(try sync.store.chat("c")?.chat.encryptedTitle == "three")
        try sync.apply(.chatUpdate(OM.record("c", titleV: 3, title: "other three")))
        #expect(try sync.store.chat("c")?.chat.encryptedTitle == "three")
        try sync.apply(.chatUpdate(OM.record("c", titleV: 4, title: "four")))
        #expect(try sync.store.chat("c")?.chat.encryptedTitle == "four")
        #expect(try sync.store.chat("c")?.chat.versions.titleV == 4)
    }

    @Test func olderContentIsDroppedNewerReplacesKeepingPendingSends() throws {
        var sync = try OpenMatesHarness()
        try sync.apply(OM.phase1b([OM.content("c", [OM.message("a"), OM.message("b")], v: 2)]))
        try sync.apply(OM.phase1b([OM.content("c", [OM.message("old")], v: 1)]))
        #expect(try sync.messageIDs("c") == ["a", "b"])
        // The user sent "mine" offline: a pending action backs it.
        try sync.store.enqueue(
            OpenMatesPendingAction(kind: .storeMessage, chatID: "c", payload: ["message_id": "mine"]),
            applying: [
                .mergeMessages(
                    chatID: "c", messages: [OM.message("mine", at: 9)], messagesV: nil, serverMessageCount: nil)
            ])
        try sync.apply(OM.phase1b([OM.content("c", [OM.message("a"), OM.message("z", at: 5)], v: 3)]))
        #expect(try sync.messageIDs("c") == ["a", "z", "mine"])
    }

    @Test func aPendingActionBacksTheLocalValueUntilAcknowledged() throws {
        var sync = try OpenMatesHarness()
        try sync.apply(OM.phase2([OM.record("c", pinned: false)]))
        var chat = try #require(try sync.store.chat("c")?.chat)
        chat.pinned = true
        let action = try sync.store.enqueue(
            OpenMatesPendingAction(kind: .pin, chatID: "c", payload: ["pinned": true]),
            applying: [.upsertChat(chat)])
        try sync.apply(
            OM.phase2([OM.record("c", messagesV: 2, pinned: false)]), .chatPinnedUpdated(chatID: "c", pinned: false))
        #expect(try sync.store.chat("c")?.chat.pinned == true)
        try sync.store.acknowledge(action.id)
        try sync.apply(.chatPinnedUpdated(chatID: "c", pinned: false))
        #expect(try sync.store.chat("c")?.chat.pinned == false)
    }

    @Test func phase3BatchesApplyOncePerNumberAndDuplicatesAreIgnored() throws {
        var sync = try OpenMatesHarness()
        sync.applier.startSync()
        let batch = OpenMatesServerEvent.backgroundMessageSync(
            OpenMatesContentPhase(chats: [OM.content("c", [OM.message("a")], v: 1)], batchNumber: 1))
        #expect(try sync.apply(batch) == [.batchApplied(number: 1, isLast: false)])
        #expect(try sync.apply(batch) == [.duplicateBatch(1)])
        // The same messages again under another batch number are merged without duplicates.
        let again = OpenMatesServerEvent.backgroundMessageSync(
            OpenMatesContentPhase(
                chats: [OM.content("c", [OM.message("a"), OM.message("b")], v: 1)], batchNumber: 2, isLastBatch: true))
        #expect(try sync.apply(again) == [.batchApplied(number: 2, isLast: true)])
        #expect(try sync.messageIDs("c") == ["a", "b"])
        sync.applier.startSync()
        #expect(try sync.apply(batch) == [.batchApplied(number: 1, isLast: false)])
    }

    @Test func thinCacheWarmingEventsChangeAndCompleteNothing() throws {
        var sync = try OpenMatesHarness()
        try sync.apply(OM.phase1b([OM.content("c", [OM.message("a")])]))
        let before = try sync.store.localView()
        let thin = try [
            #"{"type":"phase_1_last_chat_ready","payload":{"chat_id":"c"}}"#,
            #"{"type":"phase_2_last_20_chats_ready","payload":{"chat_count":3}}"#,
            #"{"type":"phase_3_last_100_chats_ready","payload":{"chat_count":3}}"#,
        ].map { OpenMatesServerEvent(try OpenMatesEnvelope(text: $0)) }
        var signals: [OpenMatesSyncSignal] = []
        for event in thin { signals += try sync.apply(event) }
        #expect(
            signals == [
                .thinEvent(type: "phase_1_last_chat_ready"), .thinEvent(type: "phase_2_last_20_chats_ready"),
                .thinEvent(type: "phase_3_last_100_chats_ready"),
            ])
        #expect(try sync.store.localView() == before)
    }

    @Test func crossDeviceMessagesMoveContentOnlyWhenContiguous() throws {
        var sync = try OpenMatesHarness()
        try sync.apply(OM.phase1b([OM.content("c", [OM.message("a")], v: 1, count: 1)]))
        try sync.apply(.newChatMessage(chatID: "c", message: OM.message("b", at: 2), messagesV: 2, lastEdited: 50))
        var stored = try #require(try sync.store.chat("c"))
        #expect(try sync.messageIDs("c") == ["a", "b"])
        #expect(stored.content.isComplete(currentMessagesV: stored.chat.versions.messagesV))
        #expect(stored.chat.lastEdited == 50)
        // A gap (version 4 after 2): stored, but the chat reads as partial until hydrated.
        try sync.apply(.newChatMessage(chatID: "c", message: OM.message("d", at: 4), messagesV: 4, lastEdited: nil))
        stored = try #require(try sync.store.chat("c"))
        #expect(!stored.content.isComplete(currentMessagesV: stored.chat.versions.messagesV))
        // A metadata-only chat only moves its version.
        try sync.apply(OM.phase2([OM.record("m", messagesV: 3)]))
        try sync.apply(.newChatMessage(chatID: "m", message: OM.message("x"), messagesV: 4, lastEdited: nil))
        #expect(try sync.messageIDs("m") == [])
        #expect(try sync.store.chat("m")?.chat.versions.messagesV == 4)
        #expect(try sync.store.chat("m")?.content.isMetadataOnly == true)
        // A brand-new chat from another device with its first message.
        try sync.apply(.newChatMessage(chatID: "n", message: OM.message("first"), messagesV: 1, lastEdited: nil))
        #expect(try sync.messageIDs("n") == ["first"])
    }

    @Test func crossDeviceDeletePinReadAndDraftUpdates() throws {
        var sync = try OpenMatesHarness()
        try sync.apply(OM.phase1b([OM.content("c", [OM.message("a"), OM.message("b")])]))
        try sync.apply(.messageDeleted(chatID: "c", messageID: "a", messagesV: 2))
        #expect(try sync.messageIDs("c") == ["b"])
        try sync.apply(
            .chatPinnedUpdated(chatID: "c", pinned: true), .chatReadStatusUpdated(chatID: "c", unreadCount: 3))
        try sync.apply(.chatDraftUpdated(chatID: "c", encryptedDraft: "d2", draftV: 2))
        try sync.apply(.chatDraftUpdated(chatID: "c", encryptedDraft: "d1", draftV: 1))
        var chat = try #require(try sync.store.chat("c")?.chat)
        #expect(chat.pinned && chat.unreadCount == 3 && chat.encryptedDraft == "d2" && chat.versions.draftV == 2)
        try sync.apply(.chatDraftUpdated(chatID: "c", encryptedDraft: nil, draftV: 3))
        chat = try #require(try sync.store.chat("c")?.chat)
        #expect(chat.encryptedDraft == nil && chat.versions.draftV == 3)
    }

    @Test func contentBatchHydratesAndSurfacesPartialErrors() throws {
        var sync = try OpenMatesHarness()
        try sync.apply(OM.phase2([OM.record("c", messagesV: 2), OM.record("d", messagesV: 1)]))
        let answer = OpenMatesServerEvent(
            OpenMatesEnvelope(
                type: "chat_content_batch_response",
                payload: [
                    "messages_by_chat_id": ["c": [["message_id": "a", "role": "user", "created_at": 1]]],
                    "versions_by_chat_id": ["c": ["messages_v": 2, "server_message_count": 1]],
                    "partial_error": ["message": "d failed", "chat_ids": ["d"]],
                ]))
        let signals = try sync.apply(answer)
        #expect(signals == [.hydrated(["c"]), .hydrationFailed(chatIDs: ["d"], message: "d failed")])
        let stored = try #require(try sync.store.chat("c"))
        #expect(stored.content.isComplete(currentMessagesV: stored.chat.versions.messagesV))
        #expect(try sync.store.chat("d")?.content.isMetadataOnly == true)
    }

    @Test func signalsForStatusCachePrimedLogoutAndErrors() throws {
        var sync = try OpenMatesHarness()
        #expect(try sync.apply(.cachePrimed(status: "full_sync_ready")) == [.requestFreshSync])
        #expect(try sync.apply(.cachePrimed(status: "warming")) == [])
        #expect(try sync.apply(.phasedSyncComplete(phase: "all")) == [.syncComplete(phase: "all")])
        #expect(try sync.apply(.forceLogout(reason: "r")) == [.loggedOut(reason: "r")])
        #expect(try sync.apply(.initialSyncError(message: "m")) == [.initialSyncFailed("m")])
        #expect(try sync.apply(.error(message: "e")) == [.serverError("e")])
        #expect(
            try sync.apply(.offlineSyncComplete(processed: 0, conflicts: 0, errors: 0))
                == [.offlineSyncReply(processed: 0, conflicts: 0, errors: 0)])
    }
}
