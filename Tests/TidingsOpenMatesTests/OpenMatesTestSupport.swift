import Foundation
import TidingsCore

@testable import TidingsOpenMates

/// A temporary directory removed when released.
final class OpenMatesTemporaryDirectory: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tidings-openmates-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
}

/// Builders for wire values in tests.
enum OM {
    static func message(_ id: String, role: String = "user", at time: Int = 1) -> OpenMatesWireMessage {
        OpenMatesWireMessage(messageID: id, role: role, createdAt: time, raw: ["encrypted_content": .string("c-\(id)")])
    }

    static func record(
        _ id: String, messagesV: Int? = 1, titleV: Int? = 1, title: String? = nil, lastEdited: Int? = nil,
        parent: String? = nil, pinned: Bool? = nil
    ) -> OpenMatesChatRecord {
        OpenMatesChatRecord(
            chatID: id, messagesV: messagesV, titleV: titleV, encryptedTitle: title ?? "title-\(id)",
            lastEdited: lastEdited, pinned: pinned, parentChatID: parent)
    }

    static func content(_ id: String, _ messages: [OpenMatesWireMessage]?, v: Int? = 1, count: Int? = nil)
        -> OpenMatesChatContent
    {
        OpenMatesChatContent(chatID: id, messages: messages, messagesV: v, serverMessageCount: count)
    }

    static func phase1(
        _ details: OpenMatesChatRecord, recent: [OpenMatesChatRecord] = [], messages: [OpenMatesWireMessage]? = nil
    )
        -> OpenMatesServerEvent
    {
        var payload: [String: JSONValue] = [
            "chat_id": .string(details.chatID), "phase": "phase1",
            "chat_details": .object(wire(details)), "recent_chat_metadata": .array(recent.map { .object(wire($0)) }),
        ]
        payload["messages"] = messages.map { .array($0.map { .object($0.raw) }) } ?? .null
        return OpenMatesServerEvent(OpenMatesEnvelope(type: "phase_1_last_chat_ready", payload: payload))
    }

    static func wire(_ record: OpenMatesChatRecord) -> [String: JSONValue] {
        var members: [String: JSONValue] = ["chat_id": .string(record.chatID)]
        if let value = record.messagesV { members["messages_v"] = .int(Int64(value)) }
        if let value = record.titleV { members["title_v"] = .int(Int64(value)) }
        if let value = record.draftV { members["draft_v"] = .int(Int64(value)) }
        if let value = record.encryptedTitle { members["encrypted_title"] = .string(value) }
        if let value = record.lastEdited { members["last_edited_overall_timestamp"] = .int(Int64(value)) }
        if let value = record.pinned { members["pinned"] = .bool(value) }
        if let value = record.parentChatID { members["parent_chat_id"] = .string(value) }
        return members
    }

    static func phase2(_ records: [OpenMatesChatRecord], total: Int? = nil) -> OpenMatesServerEvent {
        var payload: [String: JSONValue] = [
            "chats": .array(records.map { .object(["chat_details": .object(wire($0))]) }), "phase": "phase2",
            "chat_count": .int(Int64(records.count)),
        ]
        if let total { payload["total_chat_count"] = .int(Int64(total)) }
        return OpenMatesServerEvent(OpenMatesEnvelope(type: "phase_2_last_20_chats_ready", payload: payload))
    }

    static func phase1b(_ contents: [OpenMatesChatContent]) -> OpenMatesServerEvent {
        .phase1b(OpenMatesContentPhase(chats: contents))
    }
}

extension OpenMatesContentPhase {
    init(chats: [OpenMatesChatContent], batchNumber: Int? = nil, isLastBatch: Bool = false) {
        self.init(payload: [:])
        self.chats = chats
        self.batchNumber = batchNumber
        self.isLastBatch = isLastBatch
    }
}

/// Plans events against a store and applies them, as the engine does.
struct OpenMatesHarness {
    let store: OpenMatesStore
    var applier = OpenMatesSyncApplier()

    init(store: OpenMatesStore? = nil) throws {
        self.store = try store ?? OpenMatesStore.inMemory()
    }

    @discardableResult
    mutating func apply(_ events: OpenMatesServerEvent...) throws -> [OpenMatesSyncSignal] {
        var signals: [OpenMatesSyncSignal] = []
        for event in events {
            let plan = applier.plan(event, view: try store.localView())
            try store.apply(plan.changes)
            signals += plan.signals
        }
        return signals
    }

    func messageIDs(_ chatID: String) throws -> [String] { try store.messages(chatID: chatID).map(\.messageID) }
}
