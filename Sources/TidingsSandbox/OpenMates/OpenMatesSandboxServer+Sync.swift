import Foundation
import TidingsCore
import TidingsOpenMates

extension OpenMatesSandboxServer {
    /// Handles one frame from a session.
    ///
    /// - Throws: ``TidingsOpenMates/OpenMatesError/connectionLost`` when the session is closed.
    func receive(_ text: String, session id: Int) async throws {
        guard sessions[id] != nil else { throw OpenMatesError.connectionLost }
        let envelope: OpenMatesEnvelope
        do { envelope = try OpenMatesEnvelope(text: text) } catch {
            emit(id, "error", ["message": "malformed frame"])
            return
        }
        received.append(envelope)
        let payload = envelope.payload
        switch envelope.type {
        case "ping": if !variant.unansweredPings { emit(id, "pong", [:]) }
        case "pong": break
        case "sync_status_request", "request_cache_status":
            emit(
                id, "sync_status_response",
                [
                    "is_primed": .bool(!variant.coldCache), "chat_count": .int(Int64(chats.count)),
                    "timestamp": .int(Int64(now)),
                ])
        case "phased_sync_request":
            phasedSync(id, phase: payload["phase"]?.stringValue ?? "all", client: ClientState(payload))
        case "request_chat_content_batch":
            contentBatch(id, chatIDs: (payload["chat_ids"]?.arrayValue ?? []).compactMap(\.stringValue))
        case "delete_message", "update_chat", "encrypted_chat_metadata", "chat_message_added":
            action(id, type: envelope.type, payload: payload)
        default:
            // The reference server logs an unknown type and answers nothing (`send_message`, `pin_chat`, …).
            ignoredTypes.append(envelope.type)
        }
    }

    struct ClientState {
        var versions: [String: (messages: Int, title: Int)] = [:]
        init(_ payload: [String: JSONValue]) {
            for (id, value) in payload["client_chat_versions"]?.objectValue ?? [:] {
                versions[id] = (value["messages_v"]?.intValue ?? 0, value["title_v"]?.intValue ?? 0)
            }
        }
    }

    /// Parents newest first, each followed by nothing: sub-chats are looked up per parent.
    var orderedParents: [OpenMatesSandboxChat] {
        chats.values.filter { $0.parentChatID == nil }.sorted {
            ($0.lastEdited, $1.chatID) > ($1.lastEdited, $0.chatID)
        }
    }

    /// Every chat in the server's order: pinned chats first, then the most recently edited.
    public var orderedChats: [OpenMatesSandboxChat] {
        chats.values.sorted {
            ($0.pinned ? 1 : 0, $0.lastEdited, $1.chatID) > ($1.pinned ? 1 : 0, $1.lastEdited, $0.chatID)
        }
    }

    func subChats(of parent: String) -> [OpenMatesSandboxChat] {
        chats.values.filter { $0.parentChatID == parent }.sorted { $0.chatID < $1.chatID }
    }

    func phasedSync(_ id: Int, phase: String, client: ClientState) {
        let parents = orderedParents
        let first10 = Array(parents.prefix(10))
        var events: [(String, [String: JSONValue])] = []
        if phase == "all" || phase == "phase1" {
            if let last = first10.first {
                var recent: [JSONValue] = []
                for parent in first10.dropFirst() {
                    recent.append(.object(parent.details))
                    recent += subChats(of: parent.chatID).map { .object($0.details) }
                }
                recent += subChats(of: last.chatID).map { .object($0.details) }
                events.append(
                    (
                        "phase_1_last_chat_ready",
                        [
                            "chat_id": .string(last.chatID), "chat_details": .object(last.details), "messages": .null,
                            "recent_chat_metadata": .array(recent),
                            "new_chat_suggestions": .array(suggestions.map(JSONValue.object)),
                            "daily_inspirations": .array(dailyInspirations.map(JSONValue.object)), "phase": "phase1",
                            "already_synced": .bool(client.versions[last.chatID]?.messages == last.messagesV),
                        ]
                    ))
                // A cold cache is answered from the database: the last chat's content only, as the public server
                // does until its re-warm has filled the cache.
                let contentChats = variant.coldCache ? [last] : first10
                let withSubChats =
                    variant.subChatContentInPhase1b
                    ? contentChats.flatMap { [$0] + subChats(of: $0.chatID) } : contentChats
                events.append(("phase_1b_chat_content_ready", content(withSubChats, client: client)))
            }
        }
        if phase == "all" || phase == "phase2" {
            let window = orderedChats.prefix(100).filter { chat in
                guard let known = client.versions[chat.chatID] else { return true }
                return known.messages < chat.messagesV || known.title < chat.titleV
            }
            let total = variant.lateTotalChatCount ? (lastReportedTotal ?? chats.count) : chats.count
            lastReportedTotal = chats.count
            events.append(
                (
                    "phase_2_last_20_chats_ready",
                    [
                        "chats": .array(window.map { .object(phase2Entry($0)) }),
                        "chat_count": .int(Int64(window.count)), "total_chat_count": .int(Int64(total)),
                        "phase": "phase2",
                    ]
                ))
        }
        if phase == "phase3" {
            let rest = Array(orderedChats.prefix(100).dropFirst(variant.phase3RepeatsContentPhaseChats ? 0 : 10))
            var batch = 0
            var start = 0
            while start < rest.count {
                let slice = Array(rest[start..<min(rest.count, start + 10)])
                start += slice.count
                batch += 1
                var payload = content(slice, client: client, withMessagesV: true)
                payload["batch_number"] = .int(Int64(batch))
                payload["is_last_batch"] = .bool(start >= rest.count)
                events.append(("background_message_sync", payload))
            }
        }
        events.append(("phased_sync_complete", ["phase": .string(phase), "timestamp": .int(Int64(now))]))
        if variant.reorderPhases {
            let rank = [
                "phase_2_last_20_chats_ready": 0, "phase_1_last_chat_ready": 1, "phase_1b_chat_content_ready": 2,
            ]
            events.sort { (rank[$0.0] ?? 3) < (rank[$1.0] ?? 3) }
        }
        if variant.contentPhaseFirst {
            // A stable partition: phase 1b first, the rest in their order.
            events =
                events.filter { $0.0 == "phase_1b_chat_content_ready" }
                + events.filter { $0.0 != "phase_1b_chat_content_ready" }
        }
        for (type, payload) in events where !variant.withheldEvents.contains(type) {
            if variant.thinEventsInterleaved { emitThin(id, before: type) }
            emit(id, type, payload)
            if variant.duplicateDeliveries { emit(id, type, payload) }
            if variant.disconnectAfter == type, !disconnectedOnce {
                disconnectedOnce = true
                closeSession(id)
                return
            }
        }
    }

    /// One phase 2 entry; on a cold cache the database's shape, with the user's draft beside the details.
    private func phase2Entry(_ chat: OpenMatesSandboxChat) -> [String: JSONValue] {
        guard variant.coldCache else { return ["chat_details": .object(chat.details)] }
        return [
            "chat_details": .object(chat.details), "user_encrypted_draft_content": .null, "user_draft_version_db": 0,
        ]
    }

    private func emitThin(_ id: Int, before type: String) {
        switch type {
        case "phase_1_last_chat_ready":
            if let last = orderedParents.first { emit(id, type, ["chat_id": .string(last.chatID)]) }
        case "phase_2_last_20_chats_ready", "phase_1b_chat_content_ready":
            emit(id, "phase_2_last_20_chats_ready", ["chat_count": .int(Int64(chats.count))])
            emit(id, "phase_3_last_100_chats_ready", ["chat_count": .int(Int64(chats.count))])
        default: break
        }
    }

    /// Content entries for `list`; `messages: null` where the client has the same messages version.
    private func content(_ list: [OpenMatesSandboxChat], client: ClientState, withMessagesV: Bool = false)
        -> [String: JSONValue]
    {
        var entries: [JSONValue] = []
        var embeds: [JSONValue] = []
        var keys: [JSONValue] = []
        for chat in list {
            let upToDate = client.versions[chat.chatID]?.messages == chat.messagesV
            var entry: [String: JSONValue] = [
                "chat_id": .string(chat.chatID),
                "messages": upToDate ? .null : .array(chat.messages.map(JSONValue.object)),
                "server_message_count": .int(Int64(chat.messages.count)), "compression_checkpoints": .array([]),
            ]
            if withMessagesV { entry["messages_v"] = .int(Int64(chat.messagesV)) }
            entries.append(.object(entry))
            if !upToDate {
                embeds += chat.embeds.map(JSONValue.object)
                keys += chat.embedKeys.map(JSONValue.object)
            }
        }
        var payload: [String: JSONValue] = ["chats": .array(entries)]
        // As the real handler: these keys appear only when non-empty.
        if !embeds.isEmpty { payload["embeds"] = .array(embeds) }
        if !keys.isEmpty { payload["embed_keys"] = .array(keys) }
        return payload
    }

    /// The answer to one content request. A chat the server does not have (deleted, by any device) gets an empty
    /// messages list and no versions entry, as the public server answers (or, under
    /// ``OpenMatesSandboxVariant/deletedChatsLeftOutOfContent``, no entry at all); a failed chat gets the same
    /// empty list, named by `partial_error`. A chat the server has always gets its versions.
    private func contentBatch(_ id: Int, chatIDs: [String]) {
        guard !chatIDs.isEmpty, variant.contentNeverAnswered.isDisjoint(with: chatIDs) else { return }
        let wanted = chatIDs
        var messages: [String: JSONValue] = [:]
        var versions: [String: JSONValue] = [:]
        var embeds: [JSONValue] = []
        var keys: [JSONValue] = []
        var failed: [String] = []
        for chatID in wanted {
            guard let chat = chats[chatID] else {
                if !variant.deletedChatsLeftOutOfContent { messages[chatID] = [] }
                continue
            }
            guard !variant.contentFailures.contains(chatID) else {
                failed.append(chatID)
                messages[chatID] = []
                continue
            }
            messages[chatID] = .array(chat.messages.map(JSONValue.object))
            versions[chatID] = [
                "messages_v": .int(Int64(chat.messagesV)), "server_message_count": .int(Int64(chat.messages.count)),
            ]
            embeds += chat.embeds.map(JSONValue.object)
            keys += chat.embedKeys.map(JSONValue.object)
        }
        var payload: [String: JSONValue] = [
            "messages_by_chat_id": .object(messages), "versions_by_chat_id": .object(versions),
            "compression_checkpoints_by_chat_id": [:], "embeds": .array(embeds), "embed_keys": .array(keys),
            "code_run_outputs": [],
        ]
        if !failed.isEmpty {
            payload["partial_error"] = [
                "message": "content unavailable for some chats", "chat_ids": .array(failed.map(JSONValue.string)),
            ]
        }
        emit(id, "chat_content_batch_response", payload)
    }
}
