import Foundation
import TidingsCore
import TidingsKecalek

extension KecalekSandboxServer {
    /// Answers one request as the document describes.
    func handle(_ request: KecalekRequest, userID: String) -> KecalekResponse {
        func fail(_ status: String, _ text: String) -> KecalekResponse {
            KecalekResponse(type: request.type, requestID: request.requestID, status: status, error: text)
        }
        func ok(_ data: JSONValue) -> KecalekResponse {
            KecalekResponse(type: request.type, requestID: request.requestID, status: "ok", data: data)
        }
        let parameters = request.parameters
        if request.type == "get_conversations" {
            let list = conversationIDs.filter { members(of: $0)?.contains(userID) == true }
            return ok(
                [
                    "conversations": .array(
                        list.map { id in
                            [
                                "conversation_id": .string(id),
                                "members": .array((members(of: id) ?? []).map(JSONValue.string)),
                            ]
                        })
                ])
        }
        guard let conversationID = parameters["conversation_id"]?.identifierValue else {
            return fail("bad_request", "missing conversation_id")
        }
        guard let conversation = conversation(conversationID) else { return fail("not_found", "no such conversation") }
        guard conversation.members.contains(userID) else { return fail("forbidden", "not a member") }

        switch request.type {
        case "get_messages":
            let limit = max(0, parameters["limit"]?.intValue ?? 50)
            let offset = max(0, parameters["offset"]?.intValue ?? 0)
            let all = conversation.messages
            var page: ArraySlice<StoredMessage>
            if let text = parameters["after_ts"]?.stringValue {
                guard let after = KecalekTimestamp(text) else { return fail("bad_request", "unreadable after_ts") }
                page = ArraySlice(pageAfter(all, after: after, limit: limit, offset: offset))
            } else {
                let end = max(0, all.count - (variant.honoursOffset ? offset : 0))
                page = all[max(0, end - min(limit, variant.pageSizeCap ?? limit))..<end]
            }
            return ok(["messages": .array(page.map(\.json)), "total_count": .int(Int64(all.count))])

        case "get_deleted_since":
            guard let text = parameters["since"]?.stringValue, let since = KecalekTimestamp(text) else {
                return fail("bad_request", "missing or unreadable since")
            }
            let ids = conversation.tombstones.filter { $0.deletedAt > since }.map(\.messageID)
            return ok(["message_ids": .array(ids.map(JSONValue.string))])

        case "mark_read":
            let ids = (parameters["message_ids"]?.arrayValue ?? []).compactMap(\.identifierValue)
            guard !ids.isEmpty else { return fail("bad_request", "empty message_ids") }
            let marked = markRead(conversationID, ids: ids, by: userID)
            return ok(["marked": .int(Int64(marked))])

        default:
            return fail("unknown_type", "unknown request type")
        }
    }
}
