import Foundation
import Testing
import TidingsCore

@testable import TidingsOpenMates

/// Content decryption: chat keys unwrapped by the master key, blobs in the "OM" and legacy forms, checked
/// against vectors made by an independent implementation (Python `cryptography`), round trips, and every
/// malformed input as a typed error for that value only.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesContentCryptoTests {
    @Test func vectorsFromPythonDecrypt() throws {
        let vectors = try OpenMatesCryptoVectors.load()
        #expect(vectors.chats.count == 2)
        for chat in vectors.chats {
            let fingerprint = OpenMatesKeyFingerprint.of(chat.chatKey.bytes)
            #expect(fingerprint.map { String(format: "%02x", $0) }.joined() == chat.fingerprintHex)
            #expect(try OpenMatesChatKeyWrap.unwrap(chat.wrappedKey, masterKey: vectors.masterKey) == chat.chatKey)
            for message in chat.messages {
                let blob = try OpenMatesContentBlob(base64: message.blob)
                if let plaintext = message.plaintext {
                    #expect(try blob.openText(with: chat.chatKey) == plaintext, "\(message.messageID)")
                } else {
                    #expect(throws: OpenMatesCryptoError.fingerprintMismatch) { try blob.open(with: chat.chatKey) }
                }
            }
        }
        let chatA = try #require(vectors.chats.first)
        let title = try OpenMatesContentBlob(base64: try #require(chatA.title))
        #expect(try title.openText(with: chatA.chatKey) == "Trip to Lisbon")
    }

    @Test func bothFormsAreRecognised() throws {
        let vectors = try OpenMatesCryptoVectors.load()
        let messages = try #require(vectors.chats.first).messages
        let forms = try messages.map { try OpenMatesContentBlob(base64: $0.blob).form }
        let fingerprintA = OpenMatesKeyFingerprint.of(try #require(vectors.chats.first).chatKey.bytes)
        #expect(forms[0] == .fingerprinted(fingerprint: fingerprintA))
        #expect(forms[1] == .legacy)
        // The legacy blob whose IV starts with "OM" parses as the current form, and still opens (as legacy).
        #expect(forms[4] == .fingerprinted(fingerprint: [7, 7, 7, 7]))
    }

    @Test func storedChatDecryptsPerMessageAndAForeignKeyFailsOnlyItsMessage() throws {
        let vectors = try OpenMatesCryptoVectors.load()
        let chat = try #require(vectors.chats.first)
        let store = try OpenMatesStore.inMemory()
        let wire = chat.messages.enumerated().map { index, message in
            OpenMatesWireMessage(
                messageID: message.messageID, role: index.isMultiple(of: 2) ? "user" : "assistant",
                createdAt: index, raw: ["encrypted_content": .string(message.blob)])
        }
        try store.apply([
            .upsertChat(
                OpenMatesChat(
                    chatID: chat.chatID, versions: .init(messagesV: 5, titleV: 1, draftV: 0),
                    encryptedTitle: chat.title, encryptedChatKey: chat.wrappedKey)),
            .replaceContent(
                chatID: chat.chatID, messages: wire, messagesV: 5, serverMessageCount: 5, checkpoints: nil,
                keepMessageIDs: []),
        ])
        let decrypted = try store.decryptedMessages(chatID: chat.chatID, masterKey: vectors.masterKey)
        #expect(decrypted.map(\.message.messageID) == ["a-1", "a-2", "a-3", "a-4", "a-5"])
        #expect(try decrypted[0].content.get() == "Hello, mate!")
        #expect(try decrypted[1].content.get() == "Grüße aus Lissabon 🌊")
        #expect(try decrypted[2].content.get() == "")
        #expect(throws: OpenMatesCryptoError.fingerprintMismatch) { try decrypted[3].content.get() }
        #expect(try decrypted[4].content.get() == "IV starts with OM")

        let decryptor = OpenMatesContentDecryptor(masterKey: vectors.masterKey)
        let stored = try #require(try store.chat(chat.chatID)).chat
        #expect(try decryptor.title(of: stored)?.get() == "Trip to Lisbon")
        #expect(decryptor.draft(of: stored) == nil)
        #expect(try store.decryptedMessages(chatID: "not-stored", masterKey: vectors.masterKey).isEmpty)
    }

    @Test func aWrongMasterKeyFailsEveryMessageWithATypedError() throws {
        let vectors = try OpenMatesCryptoVectors.load()
        let chat = try #require(vectors.chats.last)
        let stored = OpenMatesChat(chatID: chat.chatID, encryptedChatKey: chat.wrappedKey)
        let messages = chat.messages.map {
            OpenMatesMessage(
                chatID: chat.chatID, messageID: $0.messageID, role: "user", createdAt: 0,
                raw: ["encrypted_content": .string($0.blob)])
        }
        let results = OpenMatesContentDecryptor(masterKey: .random()).decrypt(messages, of: stored)
        #expect(results.count == 1)
        // A key the master key does not open is what a hidden chat looks like (the web client cannot tell
        // either): locked, never decrypted.
        #expect(throws: OpenMatesCryptoError.hiddenChatLocked) { try results[0].content.get() }
        let noKey = OpenMatesContentDecryptor(masterKey: vectors.masterKey).decrypt(
            messages, of: OpenMatesChat(chatID: chat.chatID))
        #expect(throws: OpenMatesCryptoError.noChatKey) { try noKey[0].content.get() }
    }

    @Test func roundTripsInBothFormsAndKeyWrapping() throws {
        let master = TidingsCrypto.SymmetricKey.random()
        let chatKey = TidingsCrypto.SymmetricKey.random()
        let wrapped = try OpenMatesChatKeyWrap.wrap(chatKey, masterKey: master)
        #expect(try OpenMatesChatKeyWrap.unwrap(wrapped, masterKey: master) == chatKey)
        for text in ["", "a", "ünïcødé 🎉", String(repeating: "long ", count: 2000)] {
            let current = try OpenMatesContentBlob.seal(text, key: chatKey)
            #expect(try OpenMatesContentBlob(base64: current).openText(with: chatKey) == text)
            let currentBytes = try #require(Data(base64Encoded: current))
            #expect(Array(currentBytes.prefix(6)) == [0x4F, 0x4D] + OpenMatesKeyFingerprint.of(chatKey.bytes))
            let legacy = try OpenMatesContentBlob.sealLegacy(Array(text.utf8), key: chatKey)
            #expect(try OpenMatesContentBlob(base64: legacy).openText(with: chatKey) == text)
            // Sealed under another key: the fingerprint says so before AES-GCM is tried.
            #expect(throws: OpenMatesCryptoError.fingerprintMismatch) {
                try OpenMatesContentBlob(base64: current).open(with: .random())
            }
        }
    }

    @Test func malformedBlobsAreTypedErrors() throws {
        let key = TidingsCrypto.SymmetricKey.random()
        let good = try #require(Data(base64Encoded: try OpenMatesContentBlob.seal("secret", key: key)))
        #expect(throws: OpenMatesCryptoError.empty) { try OpenMatesContentBlob(base64: "") }
        #expect(throws: OpenMatesCryptoError.empty) { try OpenMatesContentBlob(bytes: []) }
        #expect(throws: OpenMatesCryptoError.notBase64) { try OpenMatesContentBlob(base64: "not base64!") }
        #expect(throws: OpenMatesCryptoError.notBase64) { try OpenMatesContentBlob(base64: "QUJD@") }
        #expect(throws: OpenMatesCryptoError.tooShort) {
            try OpenMatesContentBlob(base64: Data([UInt8](repeating: 1, count: 27)).base64EncodedString())
        }
        #expect(throws: OpenMatesCryptoError.tooShort) { try OpenMatesContentBlob(bytes: [0x4F, 0x4D, 1, 2]) }
        // Every single-bit flip after the header fails authentication; a flip in the fingerprint is reported
        // as a foreign key. Nothing traps, nothing returns bytes.
        for index in 0..<good.count {
            var bytes = [UInt8](good)
            bytes[index] ^= 0x01
            let blob = try OpenMatesContentBlob(bytes: bytes)
            if (2..<6).contains(index) {
                #expect(throws: OpenMatesCryptoError.fingerprintMismatch) { try blob.open(with: key) }
            } else {
                #expect(throws: OpenMatesCryptoError.authenticationFailed) { try blob.open(with: key) }
            }
        }
        // Every truncation: a typed error, never a trap.
        for length in 0..<good.count {
            #expect(throws: OpenMatesCryptoError.self) {
                try OpenMatesContentBlob(bytes: Array(good.prefix(length))).open(with: key)
            }
        }
        let notText = try OpenMatesContentBlob.seal([0xFF, 0xFE], key: key)
        #expect(throws: OpenMatesCryptoError.notText) { try OpenMatesContentBlob(base64: notText).openText(with: key) }
    }

    @Test func malformedWrappedKeysAreTypedErrors() throws {
        let vectors = try OpenMatesCryptoVectors.load()
        let master = vectors.masterKey
        #expect(throws: OpenMatesCryptoError.empty) { try OpenMatesChatKeyWrap.unwrap("", masterKey: master) }
        #expect(throws: OpenMatesCryptoError.notBase64) { try OpenMatesChatKeyWrap.unwrap("%%", masterKey: master) }
        #expect(throws: OpenMatesCryptoError.tooShort) {
            try OpenMatesChatKeyWrap.unwrap(Data(count: 20).base64EncodedString(), masterKey: master)
        }
        #expect(throws: OpenMatesCryptoError.authenticationFailed) {
            try OpenMatesChatKeyWrap.unwrap(vectors.wrappedByOtherMaster, masterKey: master)
        }
        #expect(throws: OpenMatesCryptoError.invalidChatKey) {
            try OpenMatesChatKeyWrap.unwrap(vectors.wrapped24ByteKey, masterKey: master)
        }
    }

    @Test func errorsNeverShowKeysOrPlaintext() throws {
        let key = TidingsCrypto.SymmetricKey.random()
        let blob = try OpenMatesContentBlob.seal("very secret words", key: key)
        do {
            _ = try OpenMatesContentBlob(base64: blob).open(with: .random())
            Issue.record("opened under a foreign key")
        } catch {
            #expect(!error.description.contains("secret"))
            #expect(!error.description.contains(blob))
        }
        let error = OpenMatesCryptoError(.notBase64, detail: "12 characters")
        #expect(error.description == "OpenMatesCryptoError.notBase64(12 characters)")
    }
}
