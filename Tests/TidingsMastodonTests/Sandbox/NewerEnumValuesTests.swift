import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// A server newer than the client sends enum values the client does not name (a notification type, a
/// visibility, a media type): they decode, are stored and read back exactly as sent, over v2 and v1.
@Suite(.timeLimit(.minutes(1)))
struct NewerEnumValuesTests {
    @Test(arguments: [false, true])
    func newerValuesSurviveDecodingAndStorage(_ version1Only: Bool) async throws {
        var variant = MastodonSandboxVariant.mastodon
        variant.newerEnumValues = true
        variant.version1Only = version1Only
        let fixture = try await EngineFixture(variant: variant)
        let id = ServerID(await fixture.server.post(as: fixture.bob, "hello @alice", mentioning: [fixture.alice]))
        try await fixture.engine.refresh()
        try await fixture.engine.pollNotifications()

        let status = try #require(try await fixture.engine.status(id))
        #expect(status.visibility == .unknown(MastodonSandboxVariant.newerVisibility))
        #expect(status.mediaAttachments.map(\.type) == [.unknown(MastodonSandboxVariant.newerMediaType)])
        let unknownType = MastodonNotificationType.unknown(MastodonSandboxVariant.newerNotificationType)
        if version1Only {
            let stored = try await fixture.engine.notifications()
            #expect(!stored.isEmpty)
            #expect(stored.allSatisfy { $0.type == unknownType })
        } else {
            let groups = try await fixture.engine.notificationGroups()
            #expect(!groups.isEmpty)
            #expect(groups.allSatisfy { $0.group.type == unknownType })
        }
        // Written back as sent: the stored bytes re-encode the raw values, not a placeholder.
        let encoded = String(decoding: try MastodonStatusPayload.encode(status), as: UTF8.self)
        #expect(encoded.contains("\"\(MastodonSandboxVariant.newerVisibility)\""))
        #expect(encoded.contains("\"\(MastodonSandboxVariant.newerMediaType)\""))
    }
}
