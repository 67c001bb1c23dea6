import Foundation
import TidingsCore
import TidingsOpenMates

/// O1 of issue 14: cold start from the offline store before any network.
let openMatesSuite = BenchSuite(
    name: "openmates", abstract: "OpenMates offline store: cold start to a usable chat list (O1)"
) { reporter in
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("tidings-bench-openmates-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    try await OpenMatesBench.coldStart(reporter, directory: directory)
    try await OpenMatesBench.coldStart(reporter, directory: directory, key: .random())
}

enum OpenMatesBench {
    static let chats = 100
    static let messagesPerChat = 100
    static let runs = 31

    /// Fills a store file with 100 chats of 100 messages (~300 bytes of sealed content each), as phase 1b and
    /// hydration would have left it.
    static func fill(path: String, key: TidingsCrypto.SymmetricKey? = nil) throws {
        let store = try OpenMatesStore(path: path, key: key)
        let content = String(repeating: "x", count: 300)
        for chat in 0..<chats {
            let id = String(format: "chat-%03d", chat)
            let messages = (0..<messagesPerChat).map { index in
                OpenMatesWireMessage(
                    messageID: "\(id)-m\(index)", role: index % 2 == 0 ? "user" : "assistant", createdAt: index,
                    raw: ["encrypted_content": .string(content)])
            }
            try store.apply([
                .upsertChat(
                    OpenMatesChat(
                        chatID: id, versions: .init(messagesV: messagesPerChat, titleV: 1),
                        encryptedTitle: "sealed-title", lastEdited: 1_700_000_000 - chat)),
                .replaceContent(
                    chatID: id, messages: messages, messagesV: messagesPerChat, serverMessageCount: messagesPerChat,
                    checkpoints: nil, keepMessageIDs: []),
            ])
        }
        store.database.close()
    }

    /// O1: open the store (integrity check, heal, migrations) and read the chat list plus the first 5 chats'
    /// messages, embeds and keys — what the app shows before the network. Baseline: the same open followed by
    /// reading every chat's messages (a cold start that loads the whole store).
    /// With `key`, the same on a store encrypted at rest (O1e): every row read is opened with AES-GCM.
    static func coldStart(_ reporter: BenchReporter, directory: URL, key: TidingsCrypto.SymmetricKey? = nil)
        async throws
    {
        let path = directory.appendingPathComponent(key == nil ? "o1.sqlite" : "o1e.sqlite").path
        try fill(path: path, key: key)
        var samples: [Double] = []
        var baseline: [Double] = []
        for _ in 0..<runs {
            var shown = 0
            samples.append(
                try measureSeconds {
                    let store = try OpenMatesStore(path: path, key: key)
                    let start = try store.coldStart()
                    shown = start.chats.count + start.messagesByChat.values.reduce(0) { $0 + $1.count }
                    store.database.close()
                })
            guard shown == chats + 5 * messagesPerChat else {
                throw OpenMatesBenchFailure("cold start showed \(shown) rows")
            }
            baseline.append(
                try measureSeconds {
                    let store = try OpenMatesStore(path: path, key: key)
                    for chat in try store.chatList() { _ = try store.messages(chatID: chat.chatID) }
                    store.database.close()
                })
        }
        let p50 = percentile(samples, 0.5) * 1000
        let base = percentile(baseline, 0.5) * 1000
        reporter.report(
            BenchResult(
                id: key == nil ? "O1" : "O1e",
                name:
                    "cold start to a usable chat list: 100 stored chats + first 5 chats' messages (10,000 in the store)"
                    + (key == nil ? "" : ", store encrypted at rest") + ", p50",
                value: p50, unit: "ms", baseline: base,
                note: "target: p50 ≤ 50 ms; baseline: the same open reading every chat's messages"))
    }
}

/// A benchmark whose result would not mean what it says.
struct OpenMatesBenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
