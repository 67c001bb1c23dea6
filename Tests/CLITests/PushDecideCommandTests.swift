import Foundation
import Testing
import TidingsCore
import TidingsPush

@testable import tidings

/// `tidings push decrypt --store --account`: the decrypted Mastodon payload goes through the notification policy,
/// whose decision is recorded in the store (so a second delivery of the same notification is dropped).
@Suite(.timeLimit(.minutes(1))) struct PushDecideCommandTests {
    private let keys: WebPushSubscriptionKeys
    private let directory: URL

    init() throws {
        keys = try WebPushSubscriptionKeys.generate()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "push-decide-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    private func message(_ plaintext: String) throws -> [UInt8] {
        try WebPushEncryptor.encrypt(
            Array(plaintext.utf8), receiverPublicKey: keys.publicKey, authSecret: keys.authSecret,
            encoding: .aes128gcm
        ).body
    }

    private func run(_ extra: [String], input: [UInt8]) async -> (status: Int32, output: String, error: String) {
        let words =
            ["push", "decrypt", "--private-key", keys.base64URLPrivateKey, "--auth", keys.base64URLAuthSecret] + extra
        let result = await Runner(root: tidingsRoot, environment: [:]).capture(words, standardInput: input)
        return (result.captured.status, result.captured.standardOutput, result.captured.standardError)
    }

    private var store: [String] {
        ["--store", directory.appendingPathComponent("policy.sqlite").path, "--account", "alice@mastodon.example"]
    }

    private static let mention =
        #"{"notification_id":"7","notification_type":"mention","title":"Bob mentioned you","body":"hi <there>"}"#

    @Test func aMentionIsRaisedOnceAndItsSecondDeliveryDropped() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = await run(store, input: try message(Self.mention))
        #expect(first.status == 0, "\(first.error)")
        #expect(first.output.hasPrefix("raise alice@mastodon.example#notification:7: "), "\(first.output)")
        #expect(first.output.split(separator: "\n").count == 1)
        let again = await run(store + ["--json"], input: try message(Self.mention))
        #expect(again.status == 0, "\(again.error)")
        let json = try JSONValue(parsing: Data(again.output.utf8))
        #expect(json["type"] == .string("decision"))
        #expect(json["action"] == .string("drop"))
        #expect(json["reason"] == .string("alreadyRaised"))
    }

    @Test func theJSONRaiseCarriesTheRequest() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = await run(store + ["--json"], input: try message(Self.mention))
        #expect(run.status == 0, "\(run.error)")
        let json = try JSONValue(parsing: Data(run.output.utf8))
        #expect(json["action"] == .string("raise"))
        #expect(json["identifier"] == .string("alice@mastodon.example#notification:7"))
        #expect(json["body"]?.stringValue?.contains("hi <there>") == true)
    }

    @Test func aPlaintextThatIsNotAMastodonPayloadExits65() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        for plaintext in ["not json", #"{"notification_type":"mention"}"#, #"{"notification_id":"1"}"#] {
            let run = await run(store, input: try message(plaintext))
            #expect(run.status == 65, "\(plaintext)")
            #expect(run.output.isEmpty)
            #expect(run.error.hasPrefix("Error: The push is refused: "), "\(run.error)")
        }
    }

    @Test func quietHoursAroundNowHoldThePush() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        // A window from an hour before to two hours after the current local hour holds whatever the time of day.
        let hour = Calendar.current.component(.hour, from: Date())
        let window = String(format: "%02d:00-%02d:00", (hour + 23) % 24, (hour + 2) % 24)
        let held = await run(store + ["--quiet-hours", window, "--json"], input: try message(Self.mention))
        #expect(held.status == 0, "\(held.error)")
        let json = try JSONValue(parsing: Data(held.output.utf8))
        #expect(json["action"] == .string("hold"), "\(held.output)")
        #expect(json["reason"] == .string("quietHours"))
        for bad in ["25:00-07:00", "22:00", "22:00-07:60", "ab:cd-07:00"] {
            let refused = await run(store + ["--quiet-hours", bad], input: try message(Self.mention))
            #expect(refused.status == 64, "\(bad)")
        }
        let alone = await run(["--quiet-hours", "22:00-07:00"], input: [])
        #expect(alone.status == 64)
    }

    @Test func aDigestHoldsThePushUntilTheNextDigestHourInTheGivenZone() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        // Kolkata is UTC+05:30 all year: the digest hour two hours from now is 1–2 hours away, at half past in UTC.
        let now = Date()
        let kolkataHour = Int((now.timeIntervalSince1970 + 19_800) / 3600) % 24
        let hour = (kolkataHour + 2) % 24
        let held = await run(
            store + ["--digest", "\(hour)", "--time-zone", "Asia/Kolkata", "--json"], input: try message(Self.mention))
        #expect(held.status == 0, "\(held.error)")
        let json = try JSONValue(parsing: Data(held.output.utf8))
        #expect(json["action"] == .string("hold"), "\(held.output)")
        #expect(json["reason"] == .string("digest"))
        let until = try #require(json["until"]?.stringValue.flatMap { try? Date($0, strategy: .iso8601) })
        let seconds = Int(until.timeIntervalSince1970)
        #expect(seconds % 3600 == 1800, "\(until): a whole hour in Kolkata is half past in UTC")
        #expect((seconds + 19_800) / 3600 % 24 == hour)
        #expect(until > now && until.timeIntervalSince(now) <= 2 * 3600 + 60)
        for bad in [
            ["--digest", "24"], ["--digest", "1,2,3,4,5"], ["--digest", ""], ["--digest", "8,x"],
            ["--time-zone", "../etc/passwd"], ["--time-zone", "Nowhere/Atlantis"],
        ] {
            let refused = await run(store + bad, input: try message(Self.mention))
            #expect(refused.status == 64, "\(bad)")
        }
        for alone in [["--digest", "8"], ["--time-zone", "UTC"]] {
            #expect(await run(alone, input: []).status == 64, "\(alone)")
        }
    }

    @Test func quietHoursAreReadInTheGivenZone() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        // A window around the current hour in Kolkata holds; the same window read in UTC (5.5 hours off) does not.
        let kolkataHour = Int((Date().timeIntervalSince1970 + 19_800) / 3600) % 24
        let window = String(format: "%02d:00-%02d:00", kolkataHour, (kolkataHour + 1) % 24)
        let held = await run(
            store + ["--quiet-hours", window, "--time-zone", "Asia/Kolkata"], input: try message(Self.mention))
        #expect(held.output.hasPrefix("hold until "), "\(held.output) \(held.error)")
        let raised = await run(
            store + ["--quiet-hours", window, "--time-zone", "UTC"], input: try message(Self.mention))
        #expect(raised.output.hasPrefix("raise "), "\(raised.output) \(raised.error)")
    }

    @Test func storeAndAccountGoTogether() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let onlyStore = await run(["--store", directory.appendingPathComponent("p.sqlite").path], input: [])
        #expect(onlyStore.status == 64)
        let onlyAccount = await run(["--account", "alice@mastodon.example"], input: [])
        #expect(onlyAccount.status == 64)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("p.sqlite").path))
    }
}
