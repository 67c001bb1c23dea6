import Foundation
import Testing
import TidingsCore

@testable import TidingsOpenMates

/// The offline store: list order, the 100-chat window, cold start, healing, recovery, reset and logout.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesStoreTests {
    private func fill(_ store: OpenMatesStore, chats: Int, messagesEach: Int = 2) throws {
        var sync = try OpenMatesHarness(store: store)
        for index in 0..<chats {
            let id = "c\(index)"
            try sync.apply(
                .chatUpdate(OM.record(id, lastEdited: 1000 + index)),
                OM.phase1b([OM.content(id, (0..<messagesEach).map { OM.message("\(id)-m\($0)", at: $0) })]))
        }
    }

    @Test func chatListIsPinnedFirstThenLastEdited() throws {
        let store = try OpenMatesStore.inMemory()
        var sync = try OpenMatesHarness(store: store)
        try sync.apply(
            .chatUpdate(OM.record("old", lastEdited: 1)), .chatUpdate(OM.record("new", lastEdited: 9)),
            .chatUpdate(OM.record("pinned", lastEdited: 0, pinned: true)))
        #expect(try store.chatList().map(\.chatID) == ["pinned", "new", "old"])
    }

    @Test func keepsTheLastHundredChatsButNeverOneAPendingActionConcerns() throws {
        let store = try OpenMatesStore.inMemory()
        try fill(store, chats: 3)
        try store.enqueue(OpenMatesPendingAction(kind: .hideChat, chatID: "c0"))
        try fill(store, chats: 0)
        var sync = try OpenMatesHarness(store: store)
        for index in 3..<105 { try sync.apply(.chatUpdate(OM.record("c\(index)", lastEdited: 1000 + index))) }
        let ids = Set(try store.chatList().map(\.chatID))
        #expect(ids.count == 101)
        #expect(ids.contains("c0"))
        #expect(!ids.contains("c1") && !ids.contains("c2"))
        #expect(ids.contains("c104") && ids.contains("c5"))
        // Evicted chats' messages go with them; nothing is tombstoned (they may come back).
        #expect(try store.messages(chatID: "c1").isEmpty)
        #expect(try store.count(.tombstones) == 0)
    }

    @Test func coldStartLoadsTheListAndTheFirstFiveChatsContentBeforeTheNetwork() throws {
        let directory = try OpenMatesTemporaryDirectory()
        let path = directory.path("om.sqlite")
        do {
            let store = try OpenMatesStore(path: path)
            try fill(store, chats: 8)
            let hash = OpenMatesStore.hashedChatID("c7")
            try store.apply([
                .putSide(
                    OpenMatesSideData(
                        embeds: [
                            ["embed_id": "e7", "hashed_chat_id": .string(hash)],
                            ["embed_id": "e0", "hashed_chat_id": "x"],
                        ],
                        embedKeys: [["id": "k7", "hashed_chat_id": .string(hash)]]))
            ])
            store.database.close()
        }
        let reopened = try OpenMatesStore(path: path)
        let start = try reopened.coldStart()
        #expect(start.chats.map(\.chatID) == ["c7", "c6", "c5", "c4", "c3", "c2", "c1", "c0"])
        #expect(Set(start.messagesByChat.keys) == ["c7", "c6", "c5", "c4", "c3"])
        #expect(start.messagesByChat["c7"]?.map(\.messageID) == ["c7-m0", "c7-m1"])
        #expect(start.embeds.compactMap { $0["embed_id"]?.stringValue } == ["e7"])
        #expect(start.embedKeys.compactMap { $0["id"]?.stringValue } == ["k7"])
    }

    @Test func aPartialSchemaIsHealedInPlaceKeepingItsData() throws {
        let directory = try OpenMatesTemporaryDirectory()
        let path = directory.path("om.sqlite")
        do {
            let store = try OpenMatesStore(path: path)
            try fill(store, chats: 2)
            try store.enqueue(OpenMatesPendingAction(kind: .pinChat, chatID: "c1"))
            try store.database.write { db in
                try db.execute("DROP TABLE om_embeds")
                try db.execute("DROP TABLE om_suggestions")
            }
            store.database.close()
        }
        let healed = try OpenMatesStore(path: path)
        #expect(healed.healedTables == ["om_embeds", "om_suggestions"])
        #expect(healed.openReport.recovery == nil)
        #expect(try healed.chatList().count == 2)
        #expect(try healed.messages(chatID: "c1").count == 2)
        #expect(try healed.pendingActions().map(\.kind) == [.pinChat])
        try healed.apply([.putSide(OpenMatesSideData(embeds: [["embed_id": "e"]])), .putSuggestions([["id": "s"]])])
        #expect(try healed.clientState().embedIDs == ["e"])
    }

    @Test func anUnreadableStoreIsRebuiltKeepingReadablePendingActions() throws {
        let directory = try OpenMatesTemporaryDirectory()
        let path = directory.path("om.sqlite")
        do {
            let store = try OpenMatesStore(path: path)
            try fill(store, chats: 40, messagesEach: 20)
            try store.enqueue(OpenMatesPendingAction(kind: .sendMessage, chatID: "c1", payload: ["message_id": "mine"]))
            try store.enqueue(OpenMatesPendingAction(kind: .archiveChat, chatID: "c2"))
            let (pageSize, root) = try store.database.read { db in
                (
                    try db.fetchOne(Int.self, "PRAGMA page_size") ?? 4096,
                    try db.fetchOne(Int.self, "SELECT rootpage FROM sqlite_master WHERE name = 'om_messages'") ?? 0
                )
            }
            store.database.close()
            // Overwrite the messages table's root page: the file no longer reads.
            var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            let start = (root - 1) * pageSize
            try #require(root > 1 && start + pageSize <= bytes.count)
            for offset in start..<(start + pageSize) { bytes[offset] = 0xA5 }
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
        let rebuilt = try OpenMatesStore(path: path)
        let recovery = try #require(rebuilt.openReport.recovery)
        #expect(recovery.keptAllDurableData)
        #expect(try rebuilt.pendingActions().map(\.kind) == [.sendMessage, .archiveChat])
        #expect(try rebuilt.chatList().isEmpty)
        #expect(try rebuilt.clientState() == OpenMatesClientState())
    }

    @Test func resetLocalStoreKeepsPendingActionsAndLogoutErasesEverything() throws {
        let store = try OpenMatesStore.inMemory()
        try fill(store, chats: 3)
        try store.apply([
            .putSide(OpenMatesSideData(embeds: [["embed_id": "e"]], embedKeys: [["id": "k"]])),
            .deleteChat(chatID: "c0"),
        ])
        try store.enqueue(OpenMatesPendingAction(kind: .pinChat, chatID: "c1"))
        try store.resetLocalStore()
        for table in OpenMatesStoreTable.allCases where table != .pendingActions {
            #expect(try store.count(table) == 0)
        }
        #expect(try store.count(.pendingActions) == 1)
        try fill(store, chats: 2)
        try store.apply([.putSide(OpenMatesSideData(embedKeys: [["id": "k"]]))])
        try store.eraseAll()
        for table in OpenMatesStoreTable.allCases { #expect(try store.count(table) == 0) }
    }

    @Test func clientStateDeclaresNoMessagesForMetadataOnlyChats() throws {
        let store = try OpenMatesStore.inMemory()
        var sync = try OpenMatesHarness(store: store)
        try sync.apply(
            OM.phase2([OM.record("meta", messagesV: 5, titleV: 2)]),
            OM.phase1b([OM.content("full", [OM.message("a")], v: 3)]))
        try store.apply([.putSide(OpenMatesSideData(embeds: [["embed_id": "e2"], ["embed_id": "e1"]]))])
        let state = try store.clientState()
        #expect(state.chatIDs == ["full", "meta"])
        // Declaring 5 would make the server think the content is here and send `messages: null`.
        #expect(state.chatVersions["meta"] == OpenMatesChatVersions(messagesV: 0, titleV: 2, draftV: 0))
        #expect(state.chatVersions["full"]?.messagesV == 3)
        #expect(state.embedIDs == ["e1", "e2"])
    }

    @Test func storedMessagesKeepRolesAndRawFields() throws {
        let store = try OpenMatesStore.inMemory()
        var sync = try OpenMatesHarness(store: store)
        try sync.apply(
            OM.phase1b([
                OM.content("c", [OM.message("u", role: "user", at: 1), OM.message("a", role: "assistant", at: 2)])
            ]))
        let messages = try store.messages(chatID: "c")
        #expect(messages.map(\.role) == ["user", "assistant"])
        #expect(messages[0].raw["encrypted_content"] == "c-u")
    }
}
