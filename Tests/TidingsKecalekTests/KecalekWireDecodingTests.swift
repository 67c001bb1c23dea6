import Foundation
import Testing
import TidingsCore

@testable import TidingsKecalek

/// Decoding the document's frames and lenient variants (fixtures: Tests/Fixtures/kecalek/).
@Suite(.timeLimit(.minutes(1))) struct KecalekWireDecodingTests {
    private func frames() throws -> [Data] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/kecalek/document-frames.jsonl")
        return try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map { Data($0.utf8) }
    }

    @Test func theDocumentsRequestsDecodeOnTheServerSide() throws {
        let frames = try frames()
        try #require(frames.count >= 5)
        let request = try KecalekRequest(frame: frames[0])
        #expect(request.type == "get_messages")
        #expect(request.requestID == "uuid")
        #expect(request.parameters["after_ts"] == "2026-02-15T22:15:45")
        #expect(request.parameters["limit"]?.intValue == 50)
        let markRead = try KecalekRequest(frame: frames[4])
        #expect(markRead.parameters["message_ids"] == ["only-unread-msg-id-1"])
        // Encoding puts type and request_id next to the parameters, as in the document.
        let encoded = try JSONValue(kecalekFrame: request.encoded())
        #expect(encoded == (try JSONValue(kecalekFrame: frames[0])))
    }

    @Test func aPageDecodesLenientlyMessageByMessage() throws {
        let frames = try frames()
        try #require(frames.count >= 2)
        guard case .response(let response) = try KecalekInbound(frame: frames[1]) else {
            Issue.record("not a response")
            return
        }
        #expect(response.isOK)
        #expect(response.data["total_count"]?.intValue == 123)
        let raw = try #require(response.data["messages"]?.arrayValue)
        try #require(raw.count >= 2)
        let first = try KecalekWireMessage(json: raw[0], conversationID: "conv-uuid")
        #expect(first.pinned)
        #expect(first.reactions == [KecalekReaction(userID: "carol", emoji: "👍")])
        try #require(first.readBy.map(\.userID) == ["alice", "dave"])
        #expect(first.readBy[0].readAt == KecalekTimestamp("2026-02-15T22:17:00.500"))
        #expect(first.encryptedPayload.count == 28)
        let second = try KecalekWireMessage(json: raw[1], conversationID: "conv-uuid")
        #expect(second.messageID == "42")
        #expect(second.senderID == "7")
        #expect(second.conversationID == "conv-uuid")
        #expect(second.createdAt == KecalekTimestamp("2026-02-15T22:16:02.123"))
        #expect(second.encryptedPayload.count == 28)  // unpadded base64 accepted
        #expect(!second.pinned && second.reactions.isEmpty && second.readBy.isEmpty)
    }

    @Test func notificationsDecodeFromDataOrTopLevelAndUnknownTypesSurvive() throws {
        let frames = try frames()
        try #require(frames.count > 5)
        let decoded = try frames[5...].map { try KecalekInbound(frame: $0) }
        #expect(
            decoded == [
                .notification(
                    .messagesRead(
                        conversationID: "conv-uuid", userID: "bob", messageIDs: ["m-1"],
                        readAt: KecalekTimestamp("2026-02-15T22:18:00"))),
                .notification(
                    .messageReacted(
                        conversationID: "conv-uuid", messageID: "m-1",
                        change: .replace([.init(userID: "bob", emoji: "❤️")]))),
                .notification(.messagePinned(conversationID: "conv-uuid", messageID: "m-1", pinned: true)),
                .notification(.messagePinned(conversationID: "conv-uuid", messageID: "5", pinned: false)),
                .notification(.messageDeleted(conversationID: "conv-uuid", messageIDs: ["m-1"])),
                .notification(.unknown(type: "user_typing")),
                .response(
                    KecalekResponse(type: "get_messages", requestID: "r-9", status: "error", error: "rate limited")),
            ])
    }

    @Test func garbageFramesAreTypedErrors() {
        for text in ["", "nope", "[1,2]", "{\"no\":\"type\"}", "{\"type\":\"message_pinned\"}"] {
            #expect(throws: KecalekError.malformedFrame, "\(text)") { try KecalekInbound(frame: Data(text.utf8)) }
        }
        #expect(throws: KecalekError.malformedMessage) {
            try KecalekInbound(frame: Data(#"{"type":"new_message","data":{}}"#.utf8))
        }
        #expect(throws: KecalekError.malformedMessage) {
            try KecalekWireMessage(
                json: [
                    "message_id": "1", "sender_id": "b", "created_at": "2026-02-15T22:15:45",
                    "encrypted_payload": "%%%",
                ], conversationID: "c")
        }
    }

    @Test func notificationsRoundTripThroughTheirEncoding() throws {
        let message = KecalekWireMessage(
            messageID: "m", conversationID: "c", senderID: "s", createdAt: KecalekTimestamp(microseconds: 5),
            encryptedPayload: Data([1, 2, 3]), reactions: [.init(userID: "u", emoji: "e")], pinned: true,
            readBy: [.init(userID: "r", readAt: KecalekTimestamp(microseconds: 9))])
        let all: [KecalekNotification] = [
            .newMessage(message), .messageDeleted(conversationID: "c", messageIDs: ["m"]),
            .messageReacted(conversationID: "c", messageID: "m", change: .add(.init(userID: "u", emoji: "x"))),
            .messageReacted(conversationID: "c", messageID: "m", change: .remove(.init(userID: "u", emoji: "x"))),
            .messagesRead(conversationID: "c", userID: "u", messageIDs: ["m"], readAt: nil),
        ]
        for notification in all {
            #expect(try KecalekInbound(frame: notification.encoded()) == .notification(notification))
        }
    }

    @Test func jsonEncodingEscapesAndSortsKeys() throws {
        let value: JSONValue = ["b": "line\n\"quote\"\u{01}", "a": [1, .double(2.5), true, nil]]
        let text = String(decoding: value.kecalekFrame, as: UTF8.self)
        #expect(text == #"{"a":[1,2.5,true,null],"b":"line\n\"quote\"\u0001"}"#)
        #expect(try JSONValue(kecalekFrame: value.kecalekFrame) == value)
    }

    @Test func truncatedAndMutatedFramesNeverTrap() throws {
        // A deterministic generator, so a failure reproduces.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return state
        }
        var decoded = 0
        for frame in try frames() {
            for cut in stride(from: 0, through: frame.count, by: max(1, frame.count / 40)) {
                if (try? KecalekInbound(frame: frame.prefix(cut))) != nil { decoded += 1 }
            }
            for _ in 0..<200 {
                var mutated = Array(frame)
                for _ in 0..<(1 + Int(next() % 4)) {
                    mutated[Int(next() % UInt64(mutated.count))] = UInt8(truncatingIfNeeded: next())
                }
                if case .response(let response)? = try? KecalekInbound(frame: Data(mutated)) {
                    for element in response.data["messages"]?.arrayValue ?? [] {
                        _ = try? KecalekWireMessage(json: element, conversationID: "c")
                    }
                    decoded += 1
                }
                _ = KecalekTimestamp(String(decoding: mutated.prefix(32), as: UTF8.self))
            }
        }
        // Whole frames still decode; the rest failed with typed errors instead of trapping.
        #expect(decoded >= 12)
    }
}
