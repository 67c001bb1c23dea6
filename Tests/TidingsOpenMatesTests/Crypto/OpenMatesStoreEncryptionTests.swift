import Foundation
import Testing
import TidingsCore
import TidingsSandbox

@testable import TidingsOpenMates

/// Encryption at rest: with a key, no title, draft, chat key, message, embed, embed key or pending or failed
/// action's payload is in clear in the file; a wrong key or a missing one is a typed error that leaves the file alone.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesStoreEncryptionTests {
    static let secrets = [
        "SECRET-TITLE-7f3a", "SECRET-DRAFT-91bc", "SECRET-CHATKEY-44de", "SECRET-MESSAGE-0a1b", "SECRET-EMBED-5c6d",
        "SECRET-EMBEDKEY-e8f9", "SECRET-PENDING-2b3c", "SECRET-CHECKPOINT-aa11",
        "SECRET-FAILED-cc22",
    ]

    private func fill(_ store: OpenMatesStore) throws {
        let chat = OpenMatesChat(
            chatID: "chat-1", versions: .init(messagesV: 1, titleV: 1, draftV: 1), encryptedTitle: Self.secrets[0],
            lastEdited: 10, encryptedChatKey: Self.secrets[2], encryptedDraft: Self.secrets[1],
            details: ["encrypted_title": .string(Self.secrets[0])])
        let message = OpenMatesWireMessage(
            messageID: "m-1", chatID: "chat-1", role: "user", createdAt: 5,
            raw: ["encrypted_content": .string(Self.secrets[3])])
        let hashed = OpenMatesStore.hashedChatID("chat-1")
        try store.apply([
            .upsertChat(chat),
            .replaceContent(
                chatID: "chat-1", messages: [message], messagesV: 1, serverMessageCount: 1,
                checkpoints: .array([.string(Self.secrets[7])]), keepMessageIDs: []),
            .putSide(
                OpenMatesSideData(
                    embeds: [
                        ["embed_id": "e-1", "hashed_chat_id": .string(hashed), "content": .string(Self.secrets[4])]
                    ],
                    embedKeys: [
                        [
                            "id": "k-1", "hashed_chat_id": .string(hashed),
                            "encrypted_embed_key": .string(Self.secrets[5]),
                        ]
                    ])),
        ])
        try store.enqueue(
            OpenMatesPendingAction(
                kind: .storeMessage, chatID: "chat-1", payload: ["encrypted_content": .string(Self.secrets[6])]))
        let failed = try store.enqueue(
            OpenMatesPendingAction(
                kind: .storeMessage, chatID: "chat-1", payload: ["encrypted_content": .string(Self.secrets[8])]))
        try store.abandon(failed, reason: "refused")
    }

    /// Every byte of the store's files (the database, and a WAL or journal if one was left).
    private func fileBytes(_ path: String) throws -> [UInt8] {
        var bytes: [UInt8] = []
        for suffix in ["", "-wal", "-journal"] where FileManager.default.fileExists(atPath: path + suffix) {
            bytes += [UInt8](try Data(contentsOf: URL(fileURLWithPath: path + suffix)))
        }
        return bytes
    }

    private func contains(_ haystack: [UInt8], _ needle: String) -> Bool {
        let needle = Array(needle.utf8)
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains {
            haystack[$0..<($0 + needle.count)].elementsEqual(needle)
        }
    }

    @Test func noSecretIsInClearInAnEncryptedFileAndEveryOneReadsBack() throws {
        let directory = try OpenMatesTemporaryDirectory()
        let key = TidingsCrypto.SymmetricKey.random()
        let sealedPath = directory.path("sealed.sqlite")
        let sealed = try OpenMatesStore(path: sealedPath, key: key)
        #expect(sealed.isEncrypted)
        try fill(sealed)
        sealed.database.close()
        let sealedBytes = try fileBytes(sealedPath)
        for secret in Self.secrets { #expect(!contains(sealedBytes, secret), "\(secret) in clear") }

        // The same data without a key is in clear: the check above can fail.
        let plainPath = directory.path("plain.sqlite")
        let plain = try OpenMatesStore(path: plainPath)
        try fill(plain)
        plain.database.close()
        let plainBytes = try fileBytes(plainPath)
        #expect(Self.secrets.allSatisfy { contains(plainBytes, $0) })

        let reopened = try OpenMatesStore(path: sealedPath, key: key)
        defer { reopened.database.close() }
        let chat = try #require(try reopened.chat("chat-1")).chat
        #expect(chat.encryptedTitle == Self.secrets[0] && chat.encryptedDraft == Self.secrets[1])
        #expect(
            chat.encryptedChatKey == Self.secrets[2] && chat.details["encrypted_title"]?.stringValue == Self.secrets[0])
        #expect(try reopened.messages(chatID: "chat-1").first?.raw["encrypted_content"]?.stringValue == Self.secrets[3])
        let start = try reopened.coldStart()
        #expect(start.embeds.first?["content"]?.stringValue == Self.secrets[4])
        #expect(start.embedKeys.first?["encrypted_embed_key"]?.stringValue == Self.secrets[5])
        #expect(try reopened.pendingActions().first?.payload["encrypted_content"]?.stringValue == Self.secrets[6])
        #expect(
            try reopened.failedActions().first?.action.payload["encrypted_content"]?.stringValue == Self.secrets[8])
    }

    @Test func filesHaveMode0600() throws {
        let directory = try OpenMatesTemporaryDirectory()
        let path = directory.path("mode.sqlite")
        let store = try OpenMatesStore(path: path, key: .random())
        defer { store.database.close() }
        try fill(store)
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            let attributes = try FileManager.default.attributesOfItem(atPath: path + suffix)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600, "\(suffix)")
        }
    }

    @Test func aWrongOrMissingKeyIsATypedErrorAndTheDataStays() throws {
        let directory = try OpenMatesTemporaryDirectory()
        let path = directory.path("keyed.sqlite")
        let key = TidingsCrypto.SymmetricKey.random()
        let store = try OpenMatesStore(path: path, key: key)
        try fill(store)
        store.database.close()
        #expect(throws: StoreError.wrongKey) { try OpenMatesStore(path: path, key: .random()) }
        #expect(throws: OpenMatesError.store) { try OpenMatesStore(path: path) }
        #expect(throws: StoreError.self) { try OpenMatesStore(path: path, key: .random(bitCount: 128)) }
        let again = try OpenMatesStore(path: path, key: key)
        defer { again.database.close() }
        #expect(try again.chatList().map(\.chatID) == ["chat-1"])
        #expect(try again.messages(chatID: "chat-1").count == 1)
    }

    @Test func aStoreWrittenInClearIsSealedInPlaceWhenAKeyIsGiven() throws {
        let directory = try OpenMatesTemporaryDirectory()
        let path = directory.path("upgrade.sqlite")
        let plain = try OpenMatesStore(path: path)
        try fill(plain)
        plain.database.close()
        let key = TidingsCrypto.SymmetricKey.random()
        let sealed = try OpenMatesStore(path: path, key: key)
        #expect(sealed.sealedInPlace >= Self.secrets.count)
        #expect(try sealed.messages(chatID: "chat-1").first?.raw["encrypted_content"]?.stringValue == Self.secrets[3])
        #expect(try sealed.pendingActions().first?.payload["encrypted_content"]?.stringValue == Self.secrets[6])
        sealed.database.close()
        let bytes = try fileBytes(path)
        for secret in Self.secrets { #expect(!contains(bytes, secret), "\(secret) left in clear") }
        let again = try OpenMatesStore(path: path, key: key)
        defer { again.database.close() }
        #expect(again.sealedInPlace == 0)
    }

    @Test func anEncryptedStoreSyncsAndDecryptsTheSandboxContent() async throws {
        let directory = try OpenMatesTemporaryDirectory()
        let store = try OpenMatesStore(path: directory.path("synced.sqlite"), key: .random())
        let harness = try OpenMatesClientHarness(store: store)
        await harness.server.seed(parents: 4, messagesEach: 2)
        await harness.client.start()
        #expect(await harness.untilSynced())
        let messages = try store.decryptedMessages(chatID: "chat-002", masterKey: harness.server.masterKey)
        #expect(try messages.map { try $0.content.get() } == ["Message 0 of chat-002", "Message 1 of chat-002"])
        #expect(try store.chatList().count == 4)
    }
}
