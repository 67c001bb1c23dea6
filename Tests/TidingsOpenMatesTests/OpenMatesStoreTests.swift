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
        try store.enqueue(OpenMatesPendingAction(kind: .hide, chatID: "c0"))
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

    /// Side data of `chatID`: one embed with its `chat` key and a `master` key, and one code-run output (linked by
    /// `chat_id`, or by `hashed_chat_id` when `hashedOutput`).
    private func side(_ chatID: String, hashedOutput: Bool = false) -> OpenMatesStoreChange {
        let hash = JSONValue.string(OpenMatesStore.hashedChatID(chatID))
        let embedHash = JSONValue.string(OpenMatesStore.hashedChatID("e-\(chatID)"))
        let output: [String: JSONValue] =
            hashedOutput
            ? ["id": .string("o-\(chatID)"), "hashed_chat_id": hash]
            : ["id": .string("o-\(chatID)"), "chat_id": .string(chatID)]
        return .putSide(
            OpenMatesSideData(
                embeds: [["embed_id": .string("e-\(chatID)"), "hashed_chat_id": hash]],
                embedKeys: [
                    ["id": .string("k-\(chatID)"), "hashed_embed_id": embedHash, "hashed_chat_id": hash],
                    ["id": .string("m-\(chatID)"), "hashed_embed_id": embedHash, "key_type": "master"],
                ],
                codeRunOutputs: [output]))
    }

    @Test func evictionAndDeletionTakeTheChatsEmbedsKeysAndOutputsWithThem() throws {
        let store = try OpenMatesStore.inMemory()
        try fill(store, chats: 100)
        try store.apply((0..<100).map { side("c\($0)", hashedOutput: $0.isMultiple(of: 2)) })
        // Side data of no chat (the server's own, or older stores') is kept: nothing tells whose it is.
        try store.apply([.putSide(OpenMatesSideData(embeds: [["embed_id": "loose"]], codeRunOutputs: [["id": "o"]]))])
        #expect(try store.count(.embeds) == 101 && store.count(.embedKeys) == 200)
        #expect(try store.count(.codeRunOutputs) == 101)
        // Five newer chats evict c0…c4.
        var sync = try OpenMatesHarness(store: store)
        for index in 100..<105 { try sync.apply(.chatUpdate(OM.record("c\(index)", lastEdited: 1000 + index))) }
        #expect(try store.count(.chats) == 100)
        #expect(try store.count(.embeds) == 96 && store.count(.embedKeys) == 190)
        #expect(try store.count(.codeRunOutputs) == 96)
        var embedIDs = try store.clientState().embedIDs
        #expect(embedIDs.count == 96 && !embedIDs.contains("e-c0") && !embedIDs.contains("e-c4"))
        #expect(embedIDs.contains("e-c5") && embedIDs.contains("loose"))
        // A chat the server deleted takes its side data too.
        try sync.apply(.chatDeleted(chatID: "c7"))
        #expect(try store.count(.embeds) == 95 && store.count(.embedKeys) == 188)
        #expect(try store.count(.codeRunOutputs) == 95)
        embedIDs = try store.clientState().embedIDs
        #expect(!embedIDs.contains("e-c7") && embedIDs.contains("e-c8"))
    }

    @Test func aVersion2StoreGetsTheOutputsChatColumnInPlaceKeepingItsOutputs() throws {
        let directory = try OpenMatesTemporaryDirectory()
        let path = directory.path("om.sqlite")
        do {
            let store = try OpenMatesStore(path: path)
            try fill(store, chats: 2)
            // The table as schema 2 made it: no chat column.
            try store.database.writeWithoutTransaction { db in
                try db.executeScript(
                    """
                    DROP TABLE om_code_run_outputs;
                    CREATE TABLE om_code_run_outputs(output_id TEXT PRIMARY KEY NOT NULL, body TEXT NOT NULL) WITHOUT ROWID;
                    INSERT INTO om_code_run_outputs VALUES ('o0', '{"id":"o0","chat_id":"c0"}');
                    INSERT INTO om_code_run_outputs VALUES ('o1', '{"id":"o1","hashed_chat_id":"\(OpenMatesStore.hashedChatID("c1"))"}');
                    INSERT INTO om_code_run_outputs VALUES ('o2', '{"id":"o2"}');
                    PRAGMA user_version = 2;
                    """)
            }
            store.database.close()
        }
        let migrated = try OpenMatesStore(path: path)
        #expect(try migrated.count(.codeRunOutputs) == 3)
        try migrated.apply([.deleteChat(chatID: "c0")])
        #expect(try migrated.count(.codeRunOutputs) == 2)
        try migrated.apply([.deleteChat(chatID: "c1")])
        // The output that names no chat stays.
        #expect(try migrated.count(.codeRunOutputs) == 1)
    }

    @Test func checkpointsAreKeptWhenContentArrivesAgainAtTheSameVersion() throws {
        let store = try OpenMatesStore.inMemory()
        var sync = try OpenMatesHarness(store: store)
        try sync.apply(OM.phase1b([OM.content("c", [OM.message("a")], v: 3)]))
        #expect(try store.checkpoints(chatID: "c") == nil)
        var content = OM.content("c", [OM.message("a"), OM.message("b", at: 1)], v: 3)
        content.compressionCheckpoints = ["upto": "a"]
        try sync.apply(OM.phase1b([content]))
        #expect(try store.messages(chatID: "c").count == 2)
        #expect(try store.checkpoints(chatID: "c") == ["upto": "a"])
        // Equal again without checkpoints: what was stored stays.
        try sync.apply(OM.phase1b([OM.content("c", [OM.message("a")], v: 3)]))
        #expect(try store.checkpoints(chatID: "c") == ["upto": "a"])
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
            try store.enqueue(OpenMatesPendingAction(kind: .pin, chatID: "c1"))
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
        #expect(try healed.pendingActions().map(\.kind) == [.pin])
        try healed.apply([.putSide(OpenMatesSideData(embeds: [["embed_id": "e"]])), .putSuggestions([["id": "s"]])])
        #expect(try healed.clientState().embedIDs == ["e"])
    }

    @Test func anUnreadableStoreIsRebuiltKeepingReadablePendingActions() throws {
        let directory = try OpenMatesTemporaryDirectory()
        let path = directory.path("om.sqlite")
        do {
            let store = try OpenMatesStore(path: path)
            try fill(store, chats: 40, messagesEach: 20)
            try store.enqueue(
                OpenMatesPendingAction(kind: .storeMessage, chatID: "c1", payload: ["message_id": "mine"]))
            try store.enqueue(OpenMatesPendingAction(kind: .hide, chatID: "c2"))
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
        #expect(try rebuilt.pendingActions().map(\.kind) == [.storeMessage, .hide])
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
        try store.enqueue(OpenMatesPendingAction(kind: .pin, chatID: "c1"))
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
