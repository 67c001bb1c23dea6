import Foundation
import Testing
import TidingsCore

@testable import TidingsOpenMates

/// Replays the `FuzzOpenMatesWire` seeds (Fixtures/fuzz/, and any input a fuzz run finds, copied there) with
/// every truncation and single-byte change, through the fuzz target's checks: the wire decoder and the blob
/// and key parsers refuse bad input with typed errors, never a trap, and what decodes is consistent.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesWireFuzzRegressionTests {
    static let chatKey = try! TidingsCrypto.SymmetricKey(bytes: [UInt8](repeating: 0x11, count: 32))
    static let masterKey = try! TidingsCrypto.SymmetricKey(bytes: [UInt8](repeating: 0x22, count: 32))
    static let embedKey = try! TidingsCrypto.SymmetricKey(bytes: [UInt8](repeating: 0x33, count: 32))
    static let hiddenUnlock = OpenMatesHiddenChatUnlock(
        secret: try! TidingsCrypto.SymmetricKey(bytes: [UInt8](repeating: 0x44, count: 32)))
    static let wrappedChatKey = try! OpenMatesChatKeyWrap.wrap(chatKey, masterKey: masterKey)

    /// The fuzz target's body (Fuzz/Sources/FuzzOpenMatesWire), as expectations.
    static func check(_ bytes: [UInt8]) {
        if let envelope = try? OpenMatesEnvelope(frame: bytes) {
            _ = OpenMatesServerEvent(envelope)
            #expect((try? OpenMatesEnvelope(text: envelope.text)) == envelope)
        }
        if let blob = try? OpenMatesContentBlob(bytes: bytes), let plain = try? blob.open(with: chatKey) {
            #expect(plain.count <= bytes.count)
        }
        if let text = OpenMatesUTF8.text(bytes) {
            if let blob = try? OpenMatesContentBlob(base64: text) { _ = try? blob.openText(with: chatKey) }
            _ = try? OpenMatesChatKeyWrap.unwrap(text, masterKey: masterKey)
            for key in [try? OpenMatesEmbedCrypto.unwrapKey(text, with: masterKey), try? hiddenUnlock.unwrap(text)] {
                if let key { #expect(key.bytes.count == 16 || key.bytes.count == 32) }
            }
            if let plain = try? OpenMatesEmbedCrypto.openText(text, embedKey: embedKey) {
                #expect(plain.utf8.count <= bytes.count)
            }
        }
        if let object = (try? JSONValue(parsing: bytes))?.objectValue {
            let results = decryptEmbeds(object)
            let embeds = (object["embeds"]?.arrayValue ?? []).compactMap(\.objectValue)
            #expect(results.count == embeds.filter { $0["embed_id"]?.stringValue != nil }.count)
            for result in results {
                if case .success(let text) = result.content { #expect(text.utf8.count <= bytes.count) }
            }
        }
    }

    /// A JSON input's embeds decrypted for a chat under the fixed keys, as the fuzz target does.
    static func decryptEmbeds(_ object: [String: JSONValue]) -> [OpenMatesDecryptedEmbed] {
        let embeds = (object["embeds"]?.arrayValue ?? []).compactMap(\.objectValue)
        let entries = (object["embed_keys"]?.arrayValue ?? []).compactMap(\.objectValue).compactMap(
            OpenMatesEmbedKeyEntry.init)
        let chat = OpenMatesChat(chatID: object["chat_id"]?.stringValue ?? "fuzz", encryptedChatKey: wrappedChatKey)
        return OpenMatesContentDecryptor(masterKey: masterKey).decrypt(embeds: embeds, of: chat, entries: entries)
    }

    static func seeds() throws -> [(name: String, bytes: [UInt8])] {
        let folder = try #require(Bundle.module.url(forResource: "Fixtures/fuzz", withExtension: nil))
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        return try names.map { ($0, [UInt8](try Data(contentsOf: folder.appendingPathComponent($0)))) }
    }

    @Test func seedsReachTheDecodersAndOpen() throws {
        let seeds = try Self.seeds()
        #expect(seeds.count >= 38)
        var frames = 0
        for seed in seeds where seed.name.hasSuffix(".json") {
            #expect(throws: Never.self) { try OpenMatesEnvelope(frame: seed.bytes) }
            frames += 1
        }
        #expect(frames == 30)
        let byName = Dictionary(uniqueKeysWithValues: seeds.map { ($0.name, $0.bytes) })
        for name in ["blob-current.bin", "blob-legacy.bin"] {
            #expect(
                try OpenMatesContentBlob(bytes: try #require(byName[name])).openText(with: Self.chatKey) == "fuzz seed")
        }
        let text = String(decoding: try #require(byName["blob-current.b64"]), as: UTF8.self)
        #expect(try OpenMatesContentBlob(base64: text).openText(with: Self.chatKey) == "fuzz seed")
        let wrapped = String(decoding: try #require(byName["wrapped-key.b64"]), as: UTF8.self)
        #expect(try OpenMatesChatKeyWrap.unwrap(wrapped, masterKey: Self.masterKey) == Self.chatKey)
        func seedText(_ name: String) throws -> String { String(decoding: try #require(byName[name]), as: UTF8.self) }
        #expect(
            try OpenMatesEmbedCrypto.openText(try seedText("embed-field.b64"), embedKey: Self.embedKey) == "fuzz embed")
        #expect(
            try OpenMatesEmbedCrypto.unwrapKey(try seedText("embed-key.b64"), with: Self.masterKey) == Self.embedKey)
        #expect(try Self.hiddenUnlock.unwrap(try seedText("hidden-key.b64")) == Self.chatKey)
        let objectBytes = try #require(byName["embeds-object.txt"])
        let object = try #require(try JSONValue(parsing: objectBytes).objectValue)
        let embeds = Self.decryptEmbeds(object)
        #expect(try embeds.map { try $0.content.get() } == ["fuzz embed content", "fuzz child embed"])
        #expect(try embeds.first?.type?.get() == "code")
    }

    @Test func everyCutAndByteChangeOfTheSeedsIsHandled() throws {
        for seed in try Self.seeds() {
            Self.check(seed.bytes)
            for length in stride(from: 0, to: seed.bytes.count, by: max(1, seed.bytes.count / 24)) {
                Self.check(Array(seed.bytes.prefix(length)))
            }
            for index in stride(from: 0, to: seed.bytes.count, by: max(1, seed.bytes.count / 24)) {
                for replacement: UInt8 in [0x22, 0xFF, seed.bytes[index] ^ 0x01] {
                    var bytes = seed.bytes
                    bytes[index] = replacement
                    Self.check(bytes)
                }
            }
        }
    }
}
