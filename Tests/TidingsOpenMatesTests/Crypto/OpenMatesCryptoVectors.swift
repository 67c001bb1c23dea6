import Foundation
import Testing
import TidingsCore

@testable import TidingsOpenMates

/// Fixtures/crypto-vectors.json, made by Fixtures/make_crypto_vectors.py with Python's `cryptography`.
struct OpenMatesCryptoVectors {
    struct Message {
        let messageID: String
        let blob: String
        let plaintext: String?
        let error: String?
    }

    struct Chat {
        let chatID: String
        let chatKey: TidingsCrypto.SymmetricKey
        let fingerprintHex: String
        let wrappedKey: String
        let title: String?
        let messages: [Message]
    }

    let masterKey: TidingsCrypto.SymmetricKey
    let chats: [Chat]
    let wrappedByOtherMaster: String
    let wrapped24ByteKey: String

    static func load() throws -> OpenMatesCryptoVectors {
        let url = try #require(Bundle.module.url(forResource: "Fixtures/crypto-vectors", withExtension: "json"))
        let root = try #require(try JSONValue(parsing: Data(contentsOf: url)).objectValue)
        func key(_ value: JSONValue?) throws -> TidingsCrypto.SymmetricKey {
            let text = try #require(value?.stringValue)
            let data = try #require(Data(base64Encoded: text))
            return try TidingsCrypto.SymmetricKey(bytes: [UInt8](data))
        }
        let chats = try (root["chats"]?.arrayValue ?? []).map { value -> Chat in
            let chat = try #require(value.objectValue)
            let messages = try (chat["messages"]?.arrayValue ?? []).map { value -> Message in
                let message = try #require(value.objectValue)
                return Message(
                    messageID: try #require(message["message_id"]?.stringValue),
                    blob: try #require(message["encrypted_content"]?.stringValue),
                    plaintext: message["plaintext"]?.stringValue, error: message["error"]?.stringValue)
            }
            return Chat(
                chatID: try #require(chat["chat_id"]?.stringValue), chatKey: try key(chat["chat_key_b64"]),
                fingerprintHex: try #require(chat["fingerprint_hex"]?.stringValue),
                wrappedKey: try #require(chat["encrypted_chat_key"]?.stringValue),
                title: chat["encrypted_title"]?.stringValue, messages: messages)
        }
        return OpenMatesCryptoVectors(
            masterKey: try key(root["master_key_b64"]), chats: chats,
            wrappedByOtherMaster: try #require(root["chat_key_wrapped_by_other_master"]?.stringValue),
            wrapped24ByteKey: try #require(root["wrapped_24_byte_key"]?.stringValue))
    }
}
