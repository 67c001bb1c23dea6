import Foundation
import TidingsCore
import TidingsKecalek

extension KecalekSandboxServer {
    /// The sample users: `alice` (the one who syncs), `bob` and `carol`.
    public static let sampleUsers = ["alice", "bob", "carol"]

    /// A server with the same content on every run: `general` (alice, bob, carol; 120 messages) and
    /// `random` (alice, bob; 30 messages), with keys derived from the conversation names so that a cache
    /// written on one run opens on the next.
    ///
    /// - Warning: the keys are public knowledge; this is a sandbox.
    public static func sample(clock: any Clock<Duration>) async throws -> KecalekSandboxServer {
        let server = KecalekSandboxServer(clock: clock)
        for (conversation, members, count) in [("general", sampleUsers, 120), ("random", ["alice", "bob"], 30)] {
            await server.createConversation(conversation, members: members, key: try sampleKey(for: conversation))
            try await server.seed(conversation: conversation, from: members.reversed(), count: count)
        }
        return server
    }

    /// The fixed key of a sample conversation.
    public static func sampleKey(for conversationID: String) throws -> TidingsCrypto.SymmetricKey {
        try TidingsCrypto.SymmetricKey(
            bytes: TidingsCrypto.SHA256.hash(Array("tidings kecalek sandbox \(conversationID)".utf8)))
    }
}
