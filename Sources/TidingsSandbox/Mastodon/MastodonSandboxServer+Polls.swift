import Foundation
import TidingsCore
import TidingsSandboxKit

/// Polls on statuses: `poll` in a status's JSON with the viewer's `voted`/`own_votes`, `GET /api/v1/polls/:id`
/// and `POST /api/v1/polls/:id/votes` (`choices[]`; one vote per account, 422 for a second one or a bad choice).
extension MastodonSandboxServer {
    /// A poll of a status: its choices and who picked which.
    struct Poll {
        var id: String
        var options: [String]
        var multiple: Bool
        var votes: [String: [Int]] = [:]
    }

    func pollJSON(_ poll: Poll, viewer: String) -> JSONValue {
        let counts = poll.options.indices.map { choice in poll.votes.values.filter { $0.contains(choice) }.count }
        let own = poll.votes[viewer]
        return [
            "id": .string(poll.id), "expires_at": .null, "expired": false, "multiple": .bool(poll.multiple),
            "votes_count": .int(Int64(counts.reduce(0, +))), "voters_count": .int(Int64(poll.votes.count)),
            "options": .array(
                zip(poll.options, counts).map { title, count in
                    ["title": .string(title), "votes_count": .int(Int64(count))]
                }),
            "voted": .bool(own != nil), "own_votes": .array((own ?? []).map { .int(Int64($0)) }), "emojis": [],
        ]
    }

    /// The index of the live status carrying poll `id`.
    func pollIndex(_ id: String) -> Int? {
        statuses.firstIndex { !$0.deleted && $0.poll?.id == id }
    }

    /// Votes in the viewer's name; the answer is the poll as the viewer now sees it.
    func vote(_ request: SandboxHTTPRequest, pollID: String, viewer: String) -> SandboxHTTPResponse {
        guard let index = pollIndex(pollID), var poll = statuses[index].poll else {
            return error(404, "Record not found")
        }
        let choices = request.formFields.filter { $0.0 == "choices[]" }.compactMap { Int($0.1) }
        guard poll.votes[viewer] == nil else { return error(422, "Validation failed: You have already voted") }
        guard !choices.isEmpty, choices.allSatisfy({ poll.options.indices.contains($0) }),
            poll.multiple || choices.count == 1
        else { return error(422, "Validation failed: invalid choice") }
        poll.votes[viewer] = Array(Set(choices)).sorted()
        statuses[index].poll = poll
        return .json(pollJSON(poll, viewer: viewer))
    }
}
