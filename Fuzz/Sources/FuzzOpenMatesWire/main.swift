import Foundation
import TidingsCore
import TidingsOpenMates

/// The keys the seeds in Tests/Fixtures/fuzz/openmates/ were sealed with, so mutations reach AES-GCM.
let chatKey = try! TidingsCrypto.SymmetricKey(bytes: [UInt8](repeating: 0x11, count: 32))
let masterKey = try! TidingsCrypto.SymmetricKey(bytes: [UInt8](repeating: 0x22, count: 32))
/// The embed key and the hidden-chat secret of the embed and hidden-key seeds.
let embedKey = try! TidingsCrypto.SymmetricKey(bytes: [UInt8](repeating: 0x33, count: 32))
let hiddenUnlock = OpenMatesHiddenChatUnlock(
    secret: try! TidingsCrypto.SymmetricKey(bytes: [UInt8](repeating: 0x44, count: 32)))
/// The chat whose embeds a JSON input carries: its key wrapped by the master key.
let wrappedChatKey = try! OpenMatesChatKeyWrap.wrap(chatKey, masterKey: masterKey)

/// Feeds arbitrary bytes to the OpenMates wire decoder and the content-blob parser:
/// - as a WebSocket frame: `OpenMatesEnvelope(frame:)` then `OpenMatesServerEvent(_:)`; an envelope that
///   decodes must read back equal from its own text;
/// - as decoded blob bytes, opened with the chat key: a plaintext is never longer than the input;
/// - as text: a base64 content blob (opened with the chat key), a wrapped chat key (unwrapped with the
///   master key), a wrapped embed key (master key), an embed field (embed key) and a hidden chat's key (a fixed
///   unlock secret); an unwrapped key is always 16 or 32 bytes;
/// - as a JSON object `{chat_id, embeds, embed_keys}`: the embeds decrypted for a chat under the fixed keys;
///   one result per embed with an ID, and a plaintext never longer than the input.
/// Every refusal is a typed error by signature; a trap or a broken invariant stops the run.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    if let envelope = try? OpenMatesEnvelope(frame: bytes) {
        _ = OpenMatesServerEvent(envelope)
        guard let again = try? OpenMatesEnvelope(text: envelope.text), again == envelope else {
            fatalError("an envelope did not survive its own text")
        }
    }
    if let blob = try? OpenMatesContentBlob(bytes: bytes), let plain = try? blob.open(with: chatKey) {
        guard plain.count <= count else { fatalError("a blob opened to more bytes than it had") }
    }
    // Valid UTF-8 exactly when decoding changes nothing (`String(validating:as:)` needs macOS 15 / iOS 18).
    let decoded = String(decoding: bytes, as: UTF8.self)
    if decoded.utf8.elementsEqual(bytes) {
        let text = decoded
        if let blob = try? OpenMatesContentBlob(base64: text) { _ = try? blob.openText(with: chatKey) }
        _ = try? OpenMatesChatKeyWrap.unwrap(text, masterKey: masterKey)
        for key in [try? OpenMatesEmbedCrypto.unwrapKey(text, with: masterKey), try? hiddenUnlock.unwrap(text)] {
            if let key, key.bytes.count != 16, key.bytes.count != 32 {
                fatalError("an unwrapped key of \(key.bytes.count) bytes")
            }
        }
        if let plain = try? OpenMatesEmbedCrypto.openText(text, embedKey: embedKey), plain.utf8.count > count {
            fatalError("an embed field opened to more bytes than it had")
        }
    }
    if let object = (try? JSONValue(parsing: bytes))?.objectValue {
        let embeds = (object["embeds"]?.arrayValue ?? []).compactMap(\.objectValue)
        let entries = (object["embed_keys"]?.arrayValue ?? []).compactMap(\.objectValue).compactMap(
            OpenMatesEmbedKeyEntry.init)
        let chat = OpenMatesChat(chatID: object["chat_id"]?.stringValue ?? "fuzz", encryptedChatKey: wrappedChatKey)
        let results = OpenMatesContentDecryptor(masterKey: masterKey).decrypt(
            embeds: embeds, of: chat, entries: entries)
        guard results.count == embeds.filter({ $0["embed_id"]?.stringValue != nil }).count else {
            fatalError("not one result per embed")
        }
        for result in results {
            if case .success(let text) = result.content, text.utf8.count > count {
                fatalError("an embed opened to more bytes than the input")
            }
        }
    }
    return 0
}
