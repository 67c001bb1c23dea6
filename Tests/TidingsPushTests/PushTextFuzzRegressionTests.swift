import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsPush

/// Replays Tests/Fixtures/fuzz/notification-text/ and nextcloud-subject/ (hand-made seeds plus a spread of the
/// FuzzNotificationPlainText and FuzzNextcloudSubject corpora, Fuzz/) through the targets' checks, with every
/// truncation and single-bit flip of each file's first 128 bytes: a problem found by fuzzing stays found.
@Suite(.timeLimit(.minutes(1))) struct PushTextFuzzRegressionTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Fixtures/fuzz").standardized

    static func files(_ folder: String) throws -> [(name: String, bytes: [UInt8])] {
        let url = fixtures.appendingPathComponent(folder)
        return try FileManager.default.contentsOfDirectory(atPath: url.path).sorted().map {
            ($0, [UInt8](try Data(contentsOf: url.appendingPathComponent($0))))
        }
    }

    /// Each file, then its truncations and single-bit flips (within the first 128 bytes; only the file itself
    /// when it is over 1 KiB, which keeps the debug build's replay short).
    static func variants(_ bytes: [UInt8]) -> [[UInt8]] {
        var result = [bytes]
        guard bytes.count <= 1024 else { return result }
        let reach = min(bytes.count, 128)
        for cut in 0..<reach { result.append(Array(bytes[..<cut])) }
        for index in 0..<reach {
            for bit in 0..<8 {
                var flipped = bytes
                flipped[index] ^= UInt8(1 << bit)
                result.append(flipped)
            }
        }
        return result
    }

    /// FuzzNotificationPlainText's promises; nil when kept.
    static func plainTextProblem(_ bytes: [UInt8]) -> String? {
        let html = String(decoding: bytes, as: UTF8.self)
        let text = NotificationPlainText.fromHTML(html)
        if text.unicodeScalars.count > html.unicodeScalars.count { return "grew" }
        if let first = text.unicodeScalars.first, first == " " || first == "\n" { return "leading whitespace" }
        if let last = text.unicodeScalars.last, last == " " || last == "\n" { return "trailing whitespace" }
        if text.contains("\n\n\n") { return "two blank lines" }
        for limit in [bytes.count % 64 + 1, NotificationPlainText.maximumLength] {
            let cut = NotificationPlainText.truncated(text, to: limit)
            if cut.count > limit { return "truncated to \(cut.count) > \(limit)" }
            if text.count <= limit, cut != text { return "a fitting text changed" }
        }
        return nil
    }

    /// FuzzNextcloudSubject's promises; nil when kept (a refusal is fine: typed throws allow nothing else).
    static func subjectProblem(_ bytes: [UInt8]) -> String? {
        guard let subject = try? NextcloudProxySubject(decryptedJSON: bytes) else { return nil }
        let json: JSONValue
        switch subject {
        case .notification(let nid, let app, let text, let type, let id):
            if nid < 0 || app.isEmpty { return "accepted nid \(nid), app \(app.debugDescription)" }
            var object: [String: JSONValue] = ["nid": .int(nid), "app": .string(app), "subject": .string(text)]
            if let type { object["type"] = .string(type) }
            if let id { object["id"] = .string(id) }
            json = .object(object)
        case .delete(let nid):
            if nid < 0 { return "negative nid" }
            json = .object(["delete": .bool(true), "nid": .int(nid)])
        case .deleteMultiple(let nids):
            if nids.count > NextcloudProxySubject.maximumNIDCount || nids.contains(where: { $0 < 0 }) {
                return "bad nids"
            }
            json = .object(["delete-multiple": .bool(true), "nids": .array(nids.map { .int($0) })])
        case .deleteAll:
            json = .object(["delete-all": .bool(true)])
        }
        let again = try? NextcloudProxySubject(decryptedJSON: [UInt8](json.jsonData()))
        return again == subject ? nil : "no round trip: \(subject)"
    }

    @Test func notificationTextSeedsKeepThePromises() async throws {
        let files = try Self.files("notification-text")
        #expect(files.count >= 3)
        let problems = try await onDedicatedThread("plain text fuzz replay") { () -> [String] in
            files.flatMap { file in
                Self.variants(file.bytes).compactMap { Self.plainTextProblem($0) }.map { "\(file.name): \($0)" }
            }
        }
        #expect(problems.isEmpty, "\(problems.prefix(5))")
    }

    @Test func nextcloudSubjectSeedsKeepThePromises() async throws {
        let files = try Self.files("nextcloud-subject")
        #expect(files.count >= 5)
        // The hand-made seeds are the protocol's four shapes and all parse.
        for name in ["notification.json", "delete.json", "delete-multiple.json", "delete-all.json", "social.json"] {
            let bytes = try #require(files.first { $0.name == name }?.bytes)
            #expect(throws: Never.self) { try NextcloudProxySubject(decryptedJSON: bytes) }
        }
        let problems = try await onDedicatedThread("subject fuzz replay") { () -> [String] in
            files.flatMap { file in
                Self.variants(file.bytes).compactMap { Self.subjectProblem($0) }.map { "\(file.name): \($0)" }
            }
        }
        #expect(problems.isEmpty, "\(problems.prefix(5))")
    }

    /// The fuzz target's finding: text full of `<a` that no `>` closes rescanned the rest of the input for every
    /// `<` (quadratic). It is text, kept as written; the scan now stops at the first search that ran off the end.
    @Test func unclosedTagsAreTextAsWritten() throws {
        let bytes = try #require(
            try Self.files("notification-text").first { $0.name == "unclosed-tags-quadratic.html" })
        let html = String(decoding: bytes.bytes, as: UTF8.self)
        #expect(NotificationPlainText.fromHTML(html) == html)
        #expect(NotificationPlainText.fromHTML("x <b>bold</b> <a" + html) == "x bold <a" + html)
    }
}
