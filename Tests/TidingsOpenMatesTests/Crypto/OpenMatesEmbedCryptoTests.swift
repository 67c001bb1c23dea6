import Foundation
import Testing
import TidingsCore

@testable import TidingsOpenMates

/// Embeds: embed keys unwrapped by the master key or the chat key (a child embed through its parent's key),
/// their fields decrypted per embed, checked against vectors made by Python `cryptography`
/// (Fixtures/make_crypto_vectors.py); a bad embed fails alone with a typed error.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesEmbedCryptoTests {
    struct Fixture {
        let vectors: OpenMatesCryptoVectors
        let root: [String: JSONValue]
        var embedsSection: [String: JSONValue] { root["embeds"]?.objectValue ?? [:] }
        var embeds: [[String: JSONValue]] { (embedsSection["embeds"]?.arrayValue ?? []).compactMap(\.objectValue) }
        var keys: [[String: JSONValue]] { (embedsSection["embed_keys"]?.arrayValue ?? []).compactMap(\.objectValue) }

        static func load() throws -> Fixture {
            let url = try #require(Bundle.module.url(forResource: "Fixtures/crypto-vectors", withExtension: "json"))
            return Fixture(
                vectors: try OpenMatesCryptoVectors.load(),
                root: try #require(try JSONValue(parsing: Data(contentsOf: url)).objectValue))
        }

        /// Chat A with its embeds and keys in a fresh store (embeds stored as the server sends them: with the
        /// plaintext fields of the fixture removed).
        func store() throws -> OpenMatesStore {
            let chat = try #require(vectors.chats.first)
            let store = try OpenMatesStore.inMemory()
            let wireEmbeds = embeds.map { $0.filter { !["plaintext", "type", "preview", "error"].contains($0.key) } }
            try store.apply([
                .upsertChat(
                    OpenMatesChat(
                        chatID: chat.chatID, versions: .init(messagesV: 1, titleV: 1, draftV: 0),
                        encryptedTitle: chat.title, encryptedChatKey: chat.wrappedKey)),
                .putSide(OpenMatesSideData(embeds: wireEmbeds, embedKeys: keys)),
            ])
            return store
        }
    }

    @Test func derivedEmbedKeyMatchesPython() throws {
        let fixture = try Fixture.load()
        let chatA = try #require(fixture.vectors.chats.first)
        let expected = try #require(Data(base64Encoded: fixture.embedsSection["derived_key_e1_b64"]?.stringValue ?? ""))
        #expect(OpenMatesEmbedCrypto.derivedEmbedKey(chatKey: chatA.chatKey, embedID: "e-1").bytes == [UInt8](expected))
        #expect(
            OpenMatesEmbedCrypto.hashedEmbedID("e-1")
                == "b94f523196aaacd8bdb9ef0d8cf2e1d8f9b766ab5097f086ff541b7112699b7b")
    }

    @Test func storedEmbedsDecryptOneByOneAndABadEmbedFailsAlone() throws {
        let fixture = try Fixture.load()
        let store = try fixture.store()
        let decryptor = OpenMatesContentDecryptor(masterKey: fixture.vectors.masterKey)
        let chat = try #require(try store.decryptedChat(chatID: "chat-a", decryptor: decryptor))
        #expect(chat.embeds.map(\.embedID) == ["e-1", "e-2", "e-3", "e-4", "e-5"])
        for (decrypted, expected) in zip(chat.embeds, fixture.embeds) {
            if let plaintext = expected["plaintext"]?.stringValue {
                #expect(try decrypted.content.get() == plaintext, "\(decrypted.embedID)")
            } else {
                let error = try #require(expected["error"]?.stringValue)
                #expect(throws: (any Error).self) { try decrypted.content.get() }
                if case .failure(let failure) = decrypted.content {
                    #expect(failure.shortDescription == "OpenMatesCryptoError.\(error)", "\(decrypted.embedID)")
                }
            }
        }
        let first = try #require(chat.embeds.first)
        #expect(try first.type?.get() == "code")
        #expect(try first.textPreview?.get() == "print(1)")
        #expect(chat.embeds[1].type == nil)
        #expect(chat.access.isHidden == false)
    }

    @Test func theChatEntryAloneOpensAnEmbedAndTheMasterEntryAloneToo() throws {
        let fixture = try Fixture.load()
        let chat = try #require(fixture.vectors.chats.first)
        let entries = fixture.keys.compactMap(OpenMatesEmbedKeyEntry.init)
        let e1Key = OpenMatesEmbedCrypto.derivedEmbedKey(chatKey: chat.chatKey, embedID: "e-1")
        let masterOnly = entries.filter { $0.keyType == .master }
        let chatOnly = entries.filter { $0.keyType == .chat }
        #expect(
            try OpenMatesEmbedCrypto.embedKey(
                embedID: "e-1", chatID: "chat-a", entries: masterOnly, masterKey: fixture.vectors.masterKey,
                chatKey: nil) == e1Key)
        #expect(
            try OpenMatesEmbedCrypto.embedKey(
                embedID: "e-1", chatID: "chat-a", entries: chatOnly, masterKey: TidingsCrypto.SymmetricKey.random(),
                chatKey: chat.chatKey) == e1Key)
        // A chat entry of another chat is never tried with this chat's key.
        #expect(throws: OpenMatesCryptoError.noEmbedKey) {
            try OpenMatesEmbedCrypto.embedKey(
                embedID: "e-1", chatID: "chat-b", entries: chatOnly, masterKey: fixture.vectors.masterKey,
                chatKey: chat.chatKey)
        }
    }

    @Test func aLockedChatStillOpensEmbedsThatHaveAMasterEntry() throws {
        let fixture = try Fixture.load()
        let chatA = try #require(fixture.vectors.chats.first)
        var locked = OpenMatesChat(chatID: "chat-a")
        locked.encryptedChatKey = fixture.vectors.wrappedByOtherMaster
        let decryptor = OpenMatesContentDecryptor(masterKey: fixture.vectors.masterKey)
        let embeds = decryptor.decrypt(
            embeds: fixture.embeds, of: locked, entries: fixture.keys.compactMap(OpenMatesEmbedKeyEntry.init))
        #expect(try embeds[0].content.get() == fixture.embeds[0]["plaintext"]?.stringValue)
        #expect(try embeds[2].content.get() == "child of e-1")
        // e-2 has only a chat entry, which needs the (locked) chat key.
        #expect(throws: OpenMatesCryptoError.noEmbedKey) { try embeds[1].content.get() }
        _ = chatA
    }

    @Test func aCycleOfParentsEndsTheSearch() throws {
        let decryptor = OpenMatesContentDecryptor(masterKey: .random())
        let chat = OpenMatesChat(
            chatID: "c", encryptedChatKey: try OpenMatesChatKeyWrap.wrap(.random(), masterKey: .random()))
        let embeds: [[String: JSONValue]] = [
            ["embed_id": "x", "parent_embed_id": "y", "encrypted_content": "AAAA"],
            ["embed_id": "y", "parent_embed_id": "x", "encrypted_content": "AAAA"],
        ]
        let result = decryptor.decrypt(embeds: embeds, of: chat, entries: [])
        #expect(result.count == 2)
        for embed in result { #expect(throws: OpenMatesCryptoError.noEmbedKey) { try embed.content.get() } }
    }

    @Test func malformedEmbedFieldsAreTypedErrorsForThatEmbedOnly() throws {
        let master = TidingsCrypto.SymmetricKey.random()
        let chatKey = TidingsCrypto.SymmetricKey.random()
        let embedKey = TidingsCrypto.SymmetricKey.random()
        let chat = OpenMatesChat(
            chatID: "c", encryptedChatKey: try OpenMatesChatKeyWrap.wrap(chatKey, masterKey: master))
        let good = try OpenMatesEmbedCrypto.sealText("fine", embedKey: embedKey)
        var tampered = [UInt8](try #require(Data(base64Encoded: good)))
        tampered[tampered.count - 1] ^= 1
        let notText = try OpenMatesChatKeyWrap.sealIVPrefixed([0xFF, 0xFE], with: embedKey)
        let cases: [(JSONValue, OpenMatesCryptoError)] = [
            (.int(7), .notBase64), ("", .empty), ("not base64!", .notBase64), ("AAAA", .tooShort),
            (.string(Data(tampered).base64EncodedString()), .authenticationFailed), (.string(notText), .notText),
        ]
        var embeds: [[String: JSONValue]] = [["embed_id": "ok", "encrypted_content": .string(good)]]
        var entries = [
            OpenMatesEmbedKeyEntry(
                hashedEmbedID: OpenMatesEmbedCrypto.hashedEmbedID("ok"), keyType: .master,
                encryptedEmbedKey: try OpenMatesEmbedCrypto.wrapKey(embedKey, with: master))
        ]
        for (index, (value, _)) in cases.enumerated() {
            embeds.append(["embed_id": .string("bad-\(index)"), "encrypted_content": value])
            entries.append(
                OpenMatesEmbedKeyEntry(
                    hashedEmbedID: OpenMatesEmbedCrypto.hashedEmbedID("bad-\(index)"), keyType: .chat,
                    hashedChatID: OpenMatesStore.hashedChatID("c"),
                    encryptedEmbedKey: try OpenMatesEmbedCrypto.wrapKey(embedKey, with: chatKey)))
        }
        embeds.append(["embed_id": "no-content"])
        let result = OpenMatesContentDecryptor(masterKey: master).decrypt(embeds: embeds, of: chat, entries: entries)
        #expect(try result[0].content.get() == "fine")
        for (index, (_, error)) in cases.enumerated() {
            #expect(throws: error, "case \(index)") { try result[index + 1].content.get() }
        }
        #expect(throws: OpenMatesCryptoError.empty) { try result.last?.content.get() }
        // An embed key entry that wraps 24 bytes is not an AES key.
        let wrapped24 = try OpenMatesChatKeyWrap.sealIVPrefixed([UInt8](repeating: 1, count: 24), with: master)
        #expect(throws: OpenMatesCryptoError.invalidChatKey) {
            try OpenMatesEmbedCrypto.unwrapKey(wrapped24, with: master)
        }
        #expect(OpenMatesEmbedKeyEntry(["hashed_embed_id": "h", "key_type": "chat"]) == nil)
        #expect(
            OpenMatesEmbedKeyEntry(["hashed_embed_id": "h", "key_type": "project", "encrypted_embed_key": "k"])?.keyType
                == .other("project"))
    }
}
