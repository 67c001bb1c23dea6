import Foundation
import Testing
import TidingsCore

@testable import TidingsOpenMates

/// Decoding every event of the README and the document (fixture: Fixtures/wire-examples.json), lenient
/// variants, and hostile input.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesWireDecodingTests {
    static func fixtureFrames() throws -> [OpenMatesEnvelope] {
        let url = try #require(Bundle.module.url(forResource: "Fixtures/wire-examples", withExtension: "json"))
        let json = try JSONValue(parsing: Data(contentsOf: url))
        let frames = try #require(json["frames"]?.arrayValue)
        return try frames.map { try OpenMatesEnvelope(text: $0.jsonString()) }
    }

    @Test func everyFixtureEventDecodesToItsCase() throws {
        let events = try Self.fixtureFrames().map(OpenMatesServerEvent.init)
        #expect(events.count == 30)
        let unknown = events.filter { if case .unknown = $0 { return true } else { return false } }
        let malformed = events.filter { if case .malformed = $0 { return true } else { return false } }
        // Only app_settings_memories_sync_ready is outside this increment's set.
        #expect(unknown == [.unknown(type: "app_settings_memories_sync_ready")])
        #expect(malformed.isEmpty)
    }

    @Test func phase1CarriesDetailsRecentChatsSuggestionsAndNullMessages() throws {
        let frames = try Self.fixtureFrames()
        guard case .phase1(let phase) = OpenMatesServerEvent(frames[0]) else { Issue.record("not phase 1"); return }
        #expect(!phase.isThin)
        #expect(phase.chatID == "c1")
        #expect(phase.chatDetails?.messagesV == 3)
        #expect(phase.messages == nil)
        #expect(phase.recentChats.map(\.chatID) == ["c2", "c2s"])
        #expect(phase.recentChats[1].isSub)
        #expect(!phase.recentChats[0].isSub)
        #expect(phase.suggestions.count == 1)
        #expect(phase.dailyInspirations.count == 1)
        guard case .phase1(let thin) = OpenMatesServerEvent(frames[1]) else { Issue.record("not phase 1"); return }
        #expect(thin.isThin)
    }

    @Test func phase1bMessagesAsObjectsOrStringsAndNullDistinctFromEmpty() throws {
        let frames = try Self.fixtureFrames()
        guard case .phase1b(let phase) = OpenMatesServerEvent(frames[2]) else { Issue.record("not 1b"); return }
        #expect(phase.chats.count == 2)
        #expect(phase.chats[0].messages?.map(\.messageID) == ["m1", "m2"])
        #expect(phase.chats[0].messages?.map(\.role) == ["user", "assistant"])
        #expect(phase.chats[0].serverMessageCount == 2)
        #expect(phase.chats[0].compressionCheckpoints != nil)
        #expect(phase.chats[1].messages == nil)
        #expect(phase.side.embeds.count == 1 && phase.side.embedKeys.count == 1 && phase.side.codeRunOutputs.count == 1)

        let empty = OpenMatesServerEvent(
            OpenMatesEnvelope(
                type: "phase_1b_chat_content_ready", payload: ["chats": [["chat_id": "x", "messages": []]]]))
        guard case .phase1b(let emptyPhase) = empty else { Issue.record("not 1b"); return }
        #expect(emptyPhase.chats[0].messages == [])
    }

    @Test func phase2EntriesWrappedOrFlatAndThinVariants() throws {
        let frames = try Self.fixtureFrames()
        guard case .phase2(let phase) = OpenMatesServerEvent(frames[3]) else { Issue.record("not 2"); return }
        #expect(!phase.isThin)
        #expect(phase.chats.first?.chatID == "c3")
        #expect(phase.chats.first?.draftV == 4)
        #expect(phase.chats.first?.encryptedDraft == "d")
        #expect(phase.totalChatCount == 3)
        guard case .phase2(let thin) = OpenMatesServerEvent(frames[4]) else { Issue.record("not 2"); return }
        #expect(thin.isThin && thin.chatCount == 12)
        guard case .phase3Ready(let thin3) = OpenMatesServerEvent(frames[5]) else { Issue.record("not 3"); return }
        #expect(thin3.isThin && thin3.chatCount == 40)
    }

    @Test func batchesStatusAndContentBatchWithPartialError() throws {
        let frames = try Self.fixtureFrames()
        guard case .backgroundMessageSync(let batch) = OpenMatesServerEvent(frames[6]) else { Issue.record(); return }
        #expect(batch.batchNumber == 1 && batch.isLastBatch && batch.chats[0].messagesV == 7)
        #expect(OpenMatesServerEvent(frames[7]) == .phasedSyncComplete(phase: "all"))
        #expect(OpenMatesServerEvent(frames[8]) == .cachePrimed(status: "full_sync_ready"))
        guard case .syncStatus(let cold) = OpenMatesServerEvent(frames[9]) else { Issue.record(); return }
        #expect(!cold.isPrimed && cold.chatCount == 1)
        guard case .syncStatus(let warm) = OpenMatesServerEvent(frames[10]) else { Issue.record(); return }
        #expect(warm.isPrimed && warm.chatCount == 4)
        guard case .initialSyncResponse(let initial) = OpenMatesServerEvent(frames[11]) else { Issue.record(); return }
        #expect(initial.chatIDsToDelete == ["gone"] && initial.chats.first?.messagesV == 1)
        #expect(initial.content.first?.messages == [])
        #expect(OpenMatesServerEvent(frames[12]) == .initialSyncError(message: "cache unavailable"))
        #expect(OpenMatesServerEvent(frames[15]) == .offlineSyncComplete(processed: 0, conflicts: 0, errors: 0))
        guard case .chatContentBatch(let answer) = OpenMatesServerEvent(frames[16]) else { Issue.record(); return }
        #expect(answer.chats.map(\.chatID) == ["c3"])
        #expect(answer.chats[0].serverMessageCount == 1)
        #expect(answer.partialError == "some chats failed")
        #expect(answer.failedChatIDs == ["c4"])
    }

    @Test func crossDeviceUpdates() throws {
        let events = try Self.fixtureFrames().map(OpenMatesServerEvent.init)
        guard case .newChatMessage(let chat, let message, let version, _) = events[17] else { Issue.record(); return }
        #expect(chat == "c1" && message.messageID == "m3" && message.chatID == "c1" && version == 4)
        guard case .chatUpdate(let record) = events[18] else { Issue.record(); return }
        #expect(record.chatID == "c1" && record.titleV == 2 && record.encryptedTitle == "t2")
        guard case .chatUpdate(let record3) = events[19] else { Issue.record(); return }
        #expect(record3.titleV == 3 && record3.encryptedTitle == "t3")
        #expect(events[20] == .messageDeleted(chatID: "c1", messageID: "m1", messagesV: nil))
        #expect(events[21] == .chatDeleted(chatID: "c2"))
        #expect(events[22] == .chatPinnedUpdated(chatID: "c1", pinned: true))
        #expect(events[23] == .chatReadStatusUpdated(chatID: "c1", unreadCount: 0))
        #expect(events[24] == .chatDraftUpdated(chatID: "c1", encryptedDraft: "dd", draftV: 2))
        #expect(events[25] == .forceLogout(reason: "session revoked"))
        #expect(events[26] == .error(message: "bad request"))
        #expect(events[27] == .ping)
        #expect(events[28] == .pong)
    }

    @Test func payloadUnderDataReadsAsEmptyAndMissingFieldsAreMalformedNotFatal() throws {
        let underData = try OpenMatesEnvelope(text: #"{"type":"chat_deleted","data":{"chat_id":"c1"}}"#)
        #expect(underData.payload.isEmpty)
        #expect(OpenMatesServerEvent(underData) == .malformed(type: "chat_deleted", detail: "no chat_id"))
        let noMessage = OpenMatesEnvelope(type: "new_chat_message", payload: ["chat_id": "c1", "message": 5])
        #expect(OpenMatesServerEvent(noMessage) == .malformed(type: "new_chat_message", detail: "no message"))
        // Wrong shapes read as absent, never as a crash.
        let odd = OpenMatesEnvelope(
            type: "phase_2_last_20_chats_ready",
            payload: ["chats": "nope", "chat_count": "x", "total_chat_count": 1e300])
        guard case .phase2(let phase) = OpenMatesServerEvent(odd) else { Issue.record(); return }
        #expect(phase.chats.isEmpty && phase.chatCount == nil && phase.totalChatCount == nil)
    }

    @Test func badElementsAreDroppedAndCountedNotFatal() {
        let event = OpenMatesServerEvent(
            OpenMatesEnvelope(
                type: "phase_1b_chat_content_ready",
                payload: [
                    "chats": [
                        ["chat_id": "c", "messages": [["role": "user"], "{not json", 7, ["message_id": "ok"]]], 5,
                    ]
                ]))
        guard case .phase1b(let phase) = event else { Issue.record(); return }
        #expect(phase.chats.count == 1)
        #expect(phase.chats[0].messages?.map(\.messageID) == ["ok"])
        #expect(phase.chats[0].droppedMessages == 3)
    }

    @Test(arguments: [
        "", "null", "[]", "{}", #"{"type":5}"#, #"{"type":""}"#, "{\"type\":\"x\"", "\u{0}",
        String(repeating: "[", count: 100_000),
        #"{"type":"x","payload":"#, #"{"type":"phase_2_last_20_chats_ready","payload":{"chats":[{"chat_details":"#,
    ])
    func hostileFramesFailWithATypedErrorThatHidesTheBytes(text: String) {
        #expect(throws: OpenMatesError.malformedFrame) { try OpenMatesEnvelope(text: text) }
        do {
            _ = try OpenMatesEnvelope(text: text + "SECRET")
        } catch {
            #expect(!error.description.contains("SECRET"))
        }
    }

    @Test func deeplyNestedMessageStringIsRefused() {
        let nested = String(repeating: "[", count: 200) + String(repeating: "]", count: 200)
        let message = JSONValue.string(#"{"message_id":"m","x":"# + nested + "}")
        #expect(OpenMatesWireMessage(wire: message) == nil)
    }

    @Test func hugeNumbersDoNotTrap() throws {
        let envelope = try OpenMatesEnvelope(
            text:
                #"{"type":"chat_read_status_updated","payload":{"chat_id":123456789012345678901234567890,"unread_count":-99999999999999999999}}"#
        )
        #expect(
            OpenMatesServerEvent(envelope)
                == .chatReadStatusUpdated(chatID: "123456789012345678901234567890", unreadCount: 0))
    }

    @Test func phasedSyncRequestCarriesTheFullClientState() throws {
        let state = OpenMatesClientState(
            chatVersions: ["b": .init(messagesV: 2, titleV: 1, draftV: 3)], chatIDs: ["b", "a"], suggestionsCount: 4,
            embedIDs: ["e2", "e1"])
        let text = OpenMatesClientRequest.phasedSync(phase: "all", state: state).envelope.text
        let json = try JSONValue(parsing: text)
        #expect(json["type"] == "phased_sync_request")
        let payload = try #require(json["payload"])
        #expect(payload["phase"] == "all")
        #expect(payload["client_chat_ids"] == ["a", "b"])
        #expect(payload["client_suggestions_count"] == 4)
        #expect(payload["client_embed_ids"] == ["e1", "e2"])
        #expect(payload["client_chat_versions"] == ["b": ["messages_v": 2, "title_v": 1, "draft_v": 3]])
        let roundTrip = try OpenMatesEnvelope(text: text)
        #expect(roundTrip == OpenMatesClientRequest.phasedSync(phase: "all", state: state).envelope)
    }
}
