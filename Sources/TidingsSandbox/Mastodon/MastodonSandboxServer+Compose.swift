import Foundation
import TidingsCore
import TidingsSandboxKit

/// `POST /api/v1/statuses`: posting (and replying) as the token's account, with Mastodon's `Idempotency-Key`:
/// a second request with the same key from the same account gets the status the first one created, and no
/// second status is made.
extension MastodonSandboxServer {
    func compose(_ request: SandboxHTTPRequest, viewer: String) -> SandboxHTTPResponse {
        let fields = Dictionary(request.formFields.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        let key = request.headers["Idempotency-Key"].map { "\(viewer) \($0)" }
        if let key, let earlier = idempotentPosts[key], let index = statuses.firstIndex(where: { $0.id == earlier }) {
            return .json(statusJSON(statuses[index], viewer: viewer))
        }
        guard let text = fields["status"], !text.isEmpty else {
            return error(422, "Validation failed: Text can't be blank")
        }
        let inReplyTo = fields["in_reply_to_id"].flatMap { $0.isEmpty ? nil : $0 }
        if let inReplyTo, liveIndex(inReplyTo) == nil { return error(404, "Record not found") }
        let visibility = fields["visibility"] ?? "public"
        let id = post(as: viewer, text, visibility: visibility, inReplyTo: inReplyTo)
        if let key { idempotentPosts[key] = id }
        guard let index = statuses.firstIndex(where: { $0.id == id }) else { return error(500, "Lost the status") }
        return .json(statusJSON(statuses[index], viewer: viewer))
    }
}
