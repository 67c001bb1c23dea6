import Foundation
import Testing
import TidingsCore
import TidingsSandbox

@testable import TidingsOpenMates

/// The checklist item: prefetch never overwrites newer versions, the server's unread state or keys, and
/// never resurrects deleted or hidden chats; what phase 1b already stored is skipped.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesPrefetchRulesTests {
    /// The sandbox serves chat-010 … chat-015 (3 messages each, `messages_v` 3); the store knows more than the
    /// prefetch cache about some of them.
    @Test func prefetchNeverOverwritesNewerVersionsOrResurrectsDeletedOrHiddenChats() async throws {
        let server = await seededServer(parents: 16)
        var hiddenOnServer = try #require(await server.chats[chatID(12)])
        hiddenOnServer.hidden = true
        await server.put(hiddenOnServer)
        var sync = try OpenMatesHarness()
        // chat-010: sync stored a newer version (5) with its own messages, unread count and key.
        let newer = OpenMatesChatRecord(
            chatID: chatID(10), messagesV: 5, titleV: 4, encryptedTitle: "sync-title", lastEdited: 1,
            unreadCount: 2, encryptedChatKey: "key-from-sync")
        try sync.apply(
            .chatUpdate(newer),
            OM.phase1b([OM.content(chatID(10), [OM.message("sync-m1"), OM.message("sync-m2")], v: 5, count: 2)]))
        // chat-011: deleted by the server (chat_deleted) after the prefetch cache was built.
        try sync.apply(.chatUpdate(OM.record(chatID(11))), .chatDeleted(chatID: chatID(11)))
        // chat-013: hidden here (a pending or synced hide) while the server's row still says visible.
        var hiddenHere = OM.record(chatID(13), messagesV: 3)
        hiddenHere.hidden = true
        try sync.apply(.chatUpdate(hiddenHere))
        // chat-014: phase 1b already stored it complete at the same version.
        try sync.apply(
            .chatUpdate(OM.record(chatID(14), messagesV: 3)),
            OM.phase1b([OM.content(chatID(14), (0..<3).map { OM.message("chat-014-m\($0)") }, v: 3, count: 3)]))

        let harness = try PrefetchHarness(server: server, store: sync.store)
        await harness.prefetcher.start()
        #expect(await harness.drive { await harness.state() == .finished })

        let (chat10, content10) = try #require(try harness.store.chat(chatID(10)))
        #expect(chat10.versions.messagesV == 5 && chat10.versions.titleV == 4)
        #expect(chat10.encryptedTitle == "sync-title")
        #expect(chat10.unreadCount == 2 && chat10.encryptedChatKey == "key-from-sync")
        #expect(content10.messagesV == 5)
        #expect(try harness.store.messages(chatID: chatID(10)).map(\.messageID) == ["sync-m1", "sync-m2"])
        #expect(try harness.store.chat(chatID(11)) == nil)
        #expect(try harness.store.count(.tombstones) == 1)
        #expect(try harness.store.chat(chatID(12)) == nil)
        let (chat13, content13) = try #require(try harness.store.chat(chatID(13)))
        #expect(chat13.hidden && content13.isMetadataOnly)
        #expect(try harness.store.messages(chatID: chatID(13)).isEmpty)
        #expect(try harness.store.messages(chatID: chatID(15)).count == 3)
        let plans = harness.events.pages.map(\.plan)
        #expect(plans.flatMap(\.skippedDeleted) == [chatID(11)])
        #expect(Set(plans.flatMap(\.skippedHidden)) == [chatID(12), chatID(13)])
        #expect(Set(plans.flatMap(\.alreadyStored)) == [chatID(10), chatID(14)])
        #expect(Set(plans.flatMap(\.contentStored)) == [chatID(15)])
        // No embed of a skipped chat was stored.
        #expect(try harness.store.count(.embeds) == 1)
    }

    @Test func aPageRepeatingPhase1bChatsIsDeduplicated() async throws {
        let server = await seededServer(parents: 13)
        let client = try OpenMatesClientHarness(server: server)
        await client.client.start()
        #expect(await client.untilSynced())
        await client.client.close()
        let before = try client.store.messages(chatID: chatID(0))
        let harness = try PrefetchHarness(server: server, store: client.store)
        harness.endpoint.variant.repeatPhase1bChats = true
        await harness.prefetcher.start()
        #expect(await harness.drive { await harness.state() == .finished })
        let first = try #require(harness.events.pages.first?.plan)
        #expect(first.alreadyStored == [chatID(0), chatID(1), chatID(2)])
        #expect(Set(first.contentStored) == [chatID(10), chatID(11), chatID(12)])
        #expect(try harness.store.messages(chatID: chatID(0)) == before)
        #expect(try harness.store.count(.chats) == 13)
    }

    @Test func aNewerServerVersionDuringSyncIsNotUndoneByAnOlderPage() throws {
        // Pure planner: a page at messages_v 2 against content stored at 3 changes nothing.
        var view = OpenMatesLocalView()
        view.chats["c"] = OpenMatesChat(chatID: "c", versions: .init(messagesV: 3, titleV: 2), unreadCount: 4)
        view.content["c"] = OpenMatesContentInfo(messagesV: 3, serverMessageCount: 5, storedMessageCount: 4)
        let page = OpenMatesPrefetchPage(
            chats: [OpenMatesChatRecord(chatID: "c", messagesV: 2, titleV: 1, encryptedTitle: "old", unreadCount: 0)],
            content: [OM.content("c", [OM.message("old")], v: 2, count: 1)], done: true)
        let plan = OpenMatesPrefetchPlanner.plan(page, view: view)
        #expect(plan.changes.isEmpty)
        #expect(plan.alreadyStored == ["c"])
    }
}
