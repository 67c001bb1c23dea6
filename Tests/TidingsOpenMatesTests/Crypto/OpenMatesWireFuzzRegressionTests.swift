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

    /// The fuzz target's body (Fuzz/Sources/FuzzOpenMatesWire), as expectations.
    static func check(_ bytes: [UInt8]) {
        if let envelope = try? OpenMatesEnvelope(frame: bytes) {
            _ = OpenMatesServerEvent(envelope)
            #expect((try? OpenMatesEnvelope(text: envelope.text)) == envelope)
        }
        if let blob = try? OpenMatesContentBlob(bytes: bytes), let plain = try? blob.open(with: chatKey) {
            #expect(plain.count <= bytes.count)
        }
        if let text = String(validating: bytes, as: UTF8.self) {
            if let blob = try? OpenMatesContentBlob(base64: text) { _ = try? blob.openText(with: chatKey) }
            _ = try? OpenMatesChatKeyWrap.unwrap(text, masterKey: masterKey)
        }
    }

    static func seeds() throws -> [(name: String, bytes: [UInt8])] {
        let folder = try #require(Bundle.module.url(forResource: "Fixtures/fuzz", withExtension: nil))
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        return try names.map { ($0, [UInt8](try Data(contentsOf: folder.appendingPathComponent($0)))) }
    }

    @Test func seedsReachTheDecodersAndOpen() throws {
        let seeds = try Self.seeds()
        #expect(seeds.count >= 34)
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
