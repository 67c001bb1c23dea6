import Foundation
import Testing
import TidingsCore

@testable import TidingsOpenMates

/// Hidden chats: a chat whose key the master key does not open reads as hidden and locked (not as an
/// authentication failure), and opens with the unlock derived from the hide password, checked against vectors
/// made by Python (`hashlib.pbkdf2_hmac`, `cryptography`; Fixtures/make_crypto_vectors.py).
@Suite(.timeLimit(.minutes(1))) struct OpenMatesHiddenChatTests {
    struct HiddenChat {
        let chatID: String
        let password: String
        let wrappedKey: String
        let title: String?
        let messages: [(id: String, blob: String, plaintext: String)]
    }

    struct Fixture {
        let master: TidingsCrypto.SymmetricKey
        let emailSalt: [UInt8]
        let secrets: [String: [UInt8]]
        let chats: [HiddenChat]

        static func load() throws -> Fixture {
            let url = try #require(Bundle.module.url(forResource: "Fixtures/crypto-vectors", withExtension: "json"))
            let root = try #require(try JSONValue(parsing: Data(contentsOf: url)).objectValue)
            let hidden = try #require(root["hidden"]?.objectValue)
            func bytes(_ value: JSONValue?) throws -> [UInt8] {
                let text = try #require(value?.stringValue)
                return [UInt8](try #require(Data(base64Encoded: text)))
            }
            var secrets: [String: [UInt8]] = [:]
            for unlock in hidden["unlocks"]?.arrayValue ?? [] {
                secrets[try #require(unlock["password"]?.stringValue)] = try bytes(unlock["secret_b64"])
            }
            let chats = try (hidden["chats"]?.arrayValue ?? []).map { chat in
                HiddenChat(
                    chatID: try #require(chat["chat_id"]?.stringValue),
                    password: try #require(chat["password"]?.stringValue),
                    wrappedKey: try #require(chat["encrypted_chat_key"]?.stringValue),
                    title: chat["encrypted_title"]?.stringValue,
                    messages: try (chat["messages"]?.arrayValue ?? []).map { message in
                        (
                            try #require(message["message_id"]?.stringValue),
                            try #require(message["encrypted_content"]?.stringValue),
                            try #require(message["plaintext"]?.stringValue)
                        )
                    })
            }
            return Fixture(
                master: try TidingsCrypto.SymmetricKey(bytes: try bytes(root["master_key_b64"])),
                emailSalt: try bytes(hidden["email_salt_b64"]), secrets: secrets, chats: chats)
        }

        func stored(_ hidden: HiddenChat) -> (OpenMatesChat, [OpenMatesMessage]) {
            var chat = OpenMatesChat(chatID: hidden.chatID, encryptedTitle: hidden.title)
            chat.encryptedChatKey = hidden.wrappedKey
            let messages = hidden.messages.map {
                OpenMatesMessage(
                    chatID: hidden.chatID, messageID: $0.id, role: "user", createdAt: 0,
                    raw: ["encrypted_content": .string($0.blob)])
            }
            return (chat, messages)
        }
    }

    @Test func theUnlockSecretMatchesPython() throws {
        let fixture = try Fixture.load()
        #expect(fixture.secrets.count == 2)
        for (password, secret) in fixture.secrets {
            let unlock = try OpenMatesHiddenChatUnlock(
                masterKey: fixture.master, password: password, emailSalt: fixture.emailSalt)
            #expect(unlock.secret.bytes == secret, "\(password)")
        }
    }

    @Test func aHiddenChatIsLockedWithoutItsUnlockAndOpensWithIt() throws {
        let fixture = try Fixture.load()
        let chatH = try #require(fixture.chats.first { $0.chatID == "chat-h" })
        let (chat, messages) = fixture.stored(chatH)

        let locked = OpenMatesContentDecryptor(masterKey: fixture.master)
        guard case .hiddenLocked = locked.access(to: chat) else {
            Issue.record("expected hiddenLocked, got \(locked.access(to: chat))")
            return
        }
        #expect(throws: OpenMatesCryptoError.hiddenChatLocked) { try locked.chatKey(for: chat) }
        for item in locked.decrypt(messages, of: chat) {
            #expect(throws: OpenMatesCryptoError.hiddenChatLocked) { try item.content.get() }
        }
        #expect(throws: OpenMatesCryptoError.hiddenChatLocked) { try locked.title(of: chat)?.get() }

        let wrong = try OpenMatesHiddenChatUnlock(
            masterKey: fixture.master, password: "1357", emailSalt: fixture.emailSalt)
        let stillLocked = OpenMatesContentDecryptor(masterKey: fixture.master, hiddenChatUnlocks: [wrong])
        #expect(throws: OpenMatesCryptoError.hiddenChatLocked) { try stillLocked.chatKey(for: chat) }

        let unlock = try OpenMatesHiddenChatUnlock(
            masterKey: fixture.master, password: chatH.password, emailSalt: fixture.emailSalt)
        let open = OpenMatesContentDecryptor(masterKey: fixture.master, hiddenChatUnlocks: [wrong, unlock])
        guard case .hiddenUnlocked = open.access(to: chat) else {
            Issue.record("expected hiddenUnlocked, got \(open.access(to: chat))")
            return
        }
        #expect(open.access(to: chat).isHidden)
        #expect(try open.decrypt(messages, of: chat).map { try $0.content.get() } == chatH.messages.map(\.plaintext))
        #expect(try open.title(of: chat)?.get() == "Hidden plans")
    }

    @Test func eachChatOpensWithItsOwnPasswordOnly() throws {
        let fixture = try Fixture.load()
        let unlocks = try fixture.chats.map {
            try OpenMatesHiddenChatUnlock(
                masterKey: fixture.master, password: $0.password, emailSalt: fixture.emailSalt)
        }
        for (index, hidden) in fixture.chats.enumerated() {
            let (chat, messages) = fixture.stored(hidden)
            let own = OpenMatesContentDecryptor(masterKey: fixture.master, hiddenChatUnlocks: [unlocks[index]])
            #expect(try own.decrypt(messages, of: chat).first?.content.get() == hidden.messages.first?.plaintext)
            let other = OpenMatesContentDecryptor(
                masterKey: fixture.master,
                hiddenChatUnlocks: unlocks.enumerated().filter { $0.offset != index }.map(\.element))
            #expect(throws: OpenMatesCryptoError.hiddenChatLocked) { try other.chatKey(for: chat) }
        }
    }

    @Test func aStoredHiddenChatReadsAsLockedInTheDecryptedView() throws {
        let fixture = try Fixture.load()
        let chatH = try #require(fixture.chats.first)
        let store = try OpenMatesStore.inMemory()
        let (chat, _) = fixture.stored(chatH)
        try store.apply([
            .upsertChat(chat),
            .replaceContent(
                chatID: chat.chatID,
                messages: chatH.messages.map {
                    OpenMatesWireMessage(
                        messageID: $0.id, role: "user", createdAt: 0, raw: ["encrypted_content": .string($0.blob)])
                }, messagesV: 1, serverMessageCount: 1, checkpoints: nil, keepMessageIDs: []),
        ])
        let view = try #require(
            try store.decryptedChat(
                chatID: chat.chatID, decryptor: OpenMatesContentDecryptor(masterKey: fixture.master)))
        guard case .hiddenLocked = view.access else {
            Issue.record("expected hiddenLocked, got \(view.access)")
            return
        }
        #expect(throws: OpenMatesCryptoError.hiddenChatLocked) { try view.messages.first?.content.get() }
        let unlock = try OpenMatesHiddenChatUnlock(
            masterKey: fixture.master, password: chatH.password, emailSalt: fixture.emailSalt)
        let open = try #require(
            try store.decryptedChat(
                chatID: chat.chatID,
                decryptor: OpenMatesContentDecryptor(masterKey: fixture.master, hiddenChatUnlocks: [unlock])))
        #expect(try open.messages.first?.content.get() == "only with the code")
    }

    @Test func aVisibleChatStaysVisibleAndAMalformedKeyIsNotCalledHidden() throws {
        let fixture = try Fixture.load()
        let vectors = try OpenMatesCryptoVectors.load()
        let decryptor = OpenMatesContentDecryptor(masterKey: vectors.masterKey)
        var visible = OpenMatesChat(chatID: "chat-a")
        visible.encryptedChatKey = try #require(vectors.chats.first).wrappedKey
        guard case .visible = decryptor.access(to: visible) else {
            Issue.record("expected visible")
            return
        }
        var malformed = OpenMatesChat(chatID: "m")
        malformed.encryptedChatKey = "not base64!"
        guard case .unavailable(let error) = decryptor.access(to: malformed) else {
            Issue.record("expected unavailable")
            return
        }
        #expect(error == .notBase64)
        guard case .unavailable(let none) = decryptor.access(to: OpenMatesChat(chatID: "n")) else {
            Issue.record("expected unavailable")
            return
        }
        #expect(none == .noChatKey)
        _ = fixture
    }

    @Test func badPasswordsAndSaltsAreRefusedBeforeDeriving() throws {
        let master = TidingsCrypto.SymmetricKey.random()
        for password in ["", "123", String(repeating: "x", count: 31), "🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂🙂"] {
            #expect(throws: OpenMatesCryptoError.invalidUnlockSecret, "\(password.utf16.count)") {
                try OpenMatesHiddenChatUnlock(masterKey: master, password: password, emailSalt: [1, 2, 3])
            }
        }
        #expect(throws: OpenMatesCryptoError.invalidUnlockSecret) {
            try OpenMatesHiddenChatUnlock(masterKey: master, password: "2468", emailSalt: [])
        }
        // Two emoji are four UTF-16 code units: the web client accepts them.
        _ = try OpenMatesHiddenChatUnlock(masterKey: master, password: "🙂🙂", emailSalt: [1])
    }

    @Test func wrapAndUnwrapRoundTrip() throws {
        let unlock = OpenMatesHiddenChatUnlock(secret: .random())
        let chatKey = TidingsCrypto.SymmetricKey.random()
        #expect(try unlock.unwrap(try unlock.wrap(chatKey)) == chatKey)
        #expect(throws: OpenMatesCryptoError.authenticationFailed) {
            try OpenMatesHiddenChatUnlock(secret: .random()).unwrap(try unlock.wrap(chatKey))
        }
    }

    @Test func aTitleSealedUnderTheMasterKeyDecrypts() throws {
        let vectors = try OpenMatesCryptoVectors.load()
        let url = try #require(Bundle.module.url(forResource: "Fixtures/crypto-vectors", withExtension: "json"))
        let root = try #require(try JSONValue(parsing: Data(contentsOf: url)).objectValue)
        let section = try #require(root["master_key_title"]?.objectValue)
        var chat = OpenMatesChat(chatID: "chat-b", encryptedTitle: section["encrypted_title"]?.stringValue)
        chat.encryptedChatKey = vectors.chats[1].wrappedKey
        let decryptor = OpenMatesContentDecryptor(masterKey: vectors.masterKey)
        #expect(try decryptor.title(of: chat)?.get() == section["plaintext"]?.stringValue)
        // Under another master key it stays a typed failure.
        #expect(throws: OpenMatesCryptoError.self) {
            try OpenMatesContentDecryptor(masterKey: .random()).title(of: chat)?.get()
        }
    }
}
