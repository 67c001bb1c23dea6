import Foundation
import Testing
import TidingsCore
import TidingsSandbox

@testable import TidingsOpenMates

/// The sandbox encrypts like the web client (per-chat keys wrapped by the master key, "OM" blobs): what a
/// client syncs decrypts with the master key alone, and nothing of it is plaintext on the wire.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesSandboxDecryptionTests {
    @Test func syncedChatsDecryptWithTheMasterKey() async throws {
        let harness = try OpenMatesClientHarness()
        await harness.server.seed(parents: 12, messagesEach: 3)
        await harness.client.start()
        #expect(await harness.untilSynced())
        let master = harness.server.masterKey
        let decryptor = OpenMatesContentDecryptor(masterKey: master)
        var decryptedChats = 0
        for chat in try harness.store.chatList() {
            #expect(
                try decryptor.title(of: chat)?.get() == OpenMatesSandboxServer.seededTitle(chatID: chat.chatID))
            let messages = try harness.store.decryptedMessages(chatID: chat.chatID, masterKey: master)
            guard !messages.isEmpty else { continue }
            decryptedChats += 1
            let texts = try messages.map { try $0.content.get() }
            #expect(texts == (0..<3).map { OpenMatesSandboxServer.seededMessage(chatID: chat.chatID, index: $0) })
            // The chat's embed opens through its key entry, wrapped by the chat key.
            let view = try #require(try harness.store.decryptedChat(chatID: chat.chatID, decryptor: decryptor))
            let embed = try #require(view.embeds.first)
            #expect(view.embeds.count == 1)
            #expect(embed.embedID == OpenMatesSandboxServer.seededEmbedID(chatID: chat.chatID))
            #expect(try embed.content.get() == OpenMatesSandboxServer.seededEmbedContent(chatID: chat.chatID))
            #expect(try embed.type?.get() == OpenMatesSandboxServer.seededEmbedType)
            #expect(try embed.textPreview?.get() == OpenMatesSandboxServer.seededEmbedPreview(chatID: chat.chatID))
        }
        #expect(decryptedChats == 10)

        let posted = try #require(
            await harness.server.postMessageFromOtherDevice(chatID: "chat-001", role: "assistant"))
        #expect(await eventually { (try? harness.store.messages(chatID: "chat-001").last?.messageID) == posted })
        let last = try #require(try harness.store.decryptedMessages(chatID: "chat-001", masterKey: master).last)
        #expect(try last.content.get() == "Posted from another device as \(posted)")
    }

    @Test func nothingOnTheWireIsPlaintextAndAnotherMasterKeyDecryptsNothing() async throws {
        let harness = try OpenMatesClientHarness()
        await harness.server.seed(parents: 3, messagesEach: 2)
        await harness.client.start()
        #expect(await harness.untilSynced())
        for frame in await harness.server.sent {
            #expect(!frame.text.contains("Message "), "\(frame.type) carries a plaintext message")
            #expect(!frame.text.contains("Chat chat-"), "\(frame.type) carries a plaintext title")
            #expect(!frame.text.contains("embed of chat-"), "\(frame.type) carries a plaintext embed")
            #expect(!frame.text.contains("preview of chat-"), "\(frame.type) carries a plaintext embed preview")
        }
        let messages = try harness.store.decryptedMessages(chatID: "chat-000", masterKey: .random())
        #expect(messages.count == 2)
        let otherView = try #require(
            try harness.store.decryptedChat(
                chatID: "chat-000", decryptor: OpenMatesContentDecryptor(masterKey: .random())))
        #expect(throws: OpenMatesCryptoError.noEmbedKey) { try otherView.embeds.first?.content.get() }
        for message in messages {
            // To another master key every chat looks hidden: locked, nothing decrypted.
            #expect(throws: OpenMatesCryptoError.hiddenChatLocked) { try message.content.get() }
        }
        // Each chat has its own key: chat-000's key does not open chat-001's content.
        let keyOf000 = try #require(await harness.server.chatKeys["chat-000"])
        let blobOf001 = try #require(
            try harness.store.messages(chatID: "chat-001").first?.raw["encrypted_content"]?.stringValue)
        #expect(throws: OpenMatesCryptoError.fingerprintMismatch) {
            try OpenMatesContentBlob(base64: blobOf001).open(with: keyOf000)
        }
    }
}
