import Foundation
import PeerSupport
import Testing
import TidingsCore

@testable import TidingsPush

/// Replays Tests/Fixtures/fuzz/webpush/ through the steps of the FuzzWebPushDecrypt target (Fuzz/), and every
/// truncation and single-bit flip of each seed, which must end in a typed error or a plaintext — never a trap.
@Suite(.timeLimit(.minutes(1))) struct WebPushFuzzRegressionTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Fixtures/fuzz/webpush").standardized

    /// The fuzz target's subscription and `aesgcm` parameters (RFC 8291 Appendix A's keys and salt).
    static let decryptor = WebPushDecryptor(
        keys: try! WebPushSubscriptionKeys(
            base64URLPrivateKey: "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94",
            base64URLAuthSecret: "BTBZMqHH6r4Tts7J_aSIgg"))
    static let legacy = try! WebPushLegacyParameters(
        cryptoKey: "dh=BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8",
        encryption: "salt=DGv6ra1nlYgDCS1FRnbzlw")

    static func seed(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: folder.appendingPathComponent(name)))
    }

    /// What the fuzz target does with one input: whether any of its decryptions succeeded, and whether one
    /// returned more bytes than it was given (the target's crash condition). Records nothing itself, so it can
    /// run on a thread of its own.
    static func replayOutcome(_ bytes: [UInt8]) -> (decrypted: Bool, grew: Bool) {
        var decrypted = false
        var grew = false
        if let plaintext = try? decryptor.decryptAES128GCM(bytes) {
            grew = grew || plaintext.count > bytes.count
            decrypted = true
        }
        if let plaintext = try? decryptor.decryptAESGCM(bytes, parameters: legacy) {
            grew = grew || plaintext.count > bytes.count
            decrypted = true
        }
        let lines = bytes.split(separator: 0x0A, maxSplits: 2, omittingEmptySubsequences: false)
        if lines.count == 3 {
            let result = try? decryptor.decrypt(
                Array(lines[2]), contentEncoding: "aesgcm", cryptoKey: String(decoding: lines[0], as: UTF8.self),
                encryption: String(decoding: lines[1], as: UTF8.self))
            decrypted = decrypted || result != nil
        }
        return (decrypted, grew)
    }

    /// ``replayOutcome(_:)`` with the growth check recorded; true when any decryption succeeded.
    @discardableResult
    static func replay(_ bytes: [UInt8]) -> Bool {
        let outcome = replayOutcome(bytes)
        #expect(!outcome.grew)
        return outcome.decrypted
    }

    @Test func theSeedsDecryptAsTheirNamesSay() throws {
        #expect(
            String(decoding: try Self.decryptor.decryptAES128GCM(Self.seed("rfc8291-appendix-a.bin")), as: UTF8.self)
                == "When I grow up, I want to be a watermelon")
        #expect(try Self.decryptor.decryptAES128GCM(Self.seed("aes128gcm-3-records.bin")).count == 39)
        #expect(try Self.decryptor.decryptAES128GCM(Self.seed("aes128gcm-empty.bin")) == [])
        #expect(
            String(
                decoding: try Self.decryptor.decryptAESGCM(Self.seed("aesgcm-1-record.bin"), parameters: Self.legacy),
                as: UTF8.self) == "{\"title\":\"New mention\",\"body\":\"hello\"}")
        #expect(
            String(
                decoding: try Self.decryptor.decryptAESGCM(
                    Self.seed("aesgcm-3-records.bin"),
                    parameters: WebPushLegacyParameters(
                        senderPublicKey: Self.legacy.senderPublicKey, salt: Self.legacy.salt, recordSize: 10)),
                as: UTF8.self) == "several small records")
        #expect(Self.replay(try Self.seed("aesgcm-headers.txt")))
    }

    @Test func everyTruncationAndBitFlipOfEverySeedEndsInATypedErrorOrPlaintext() async throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.folder.path).filter { $0 != "README.md" }
        #expect(names.count >= 6)
        let seeds = try names.sorted().map { ($0, try Self.seed($0)) }
        // Thousands of P-256 multiplications: on a thread of its own, so the two threads of Swift's pool stay
        // free for the other suites' servers meanwhile.
        let problems = try await onDedicatedThread("webpush fuzz replay") { () -> [String] in
            var problems: [String] = []
            for (name, seed) in seeds {
                for length in 0..<seed.count where Self.replayOutcome(Array(seed.prefix(length))).grew {
                    problems.append("\(name) prefix \(length) grew")
                }
                for position in seed.indices {
                    var flipped = seed
                    flipped[position] ^= 0x01
                    let outcome = Self.replayOutcome(flipped)
                    if outcome.grew { problems.append("\(name) byte \(position) grew") }
                    // A flipped bit in a message never decrypts, except where RFC 8188 authenticates nothing: the
                    // record size (bytes 16..<20) as long as the records keep their boundaries, and the whole
                    // header of a message without records (http_ece's empty message, which carries nothing
                    // either); and in the text seed, its ignored `p256ecdsa=BAAA;` (the first 15 bytes).
                    let unauthenticated =
                        name == "aes128gcm-empty.bin" || (!name.hasPrefix("aesgcm") && (16..<20).contains(position))
                        || (name == "aesgcm-headers.txt" && position < 15)
                    if !unauthenticated, outcome.decrypted { problems.append("\(name) byte \(position) decrypted") }
                }
            }
            return problems
        }
        #expect(problems.isEmpty, "\(problems)")
    }
}
