import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsPush
import TidingsSandbox

/// The push choice reads the server's `vapid_key` (seed 002 §6): a Mastodon account gets Web Push only while its
/// server offers it, so a key that appears or vanishes at a capability refresh changes the choice.
@Suite(.timeLimit(.minutes(1))) struct PushChoiceVAPIDTests {
    /// The capabilities the sandbox's `variant` answers.
    static func capabilities(_ variant: MastodonSandboxVariant) async throws -> MastodonCapabilities {
        let server = MastodonSandboxServer(variant: variant)
        _ = await server.addAccount(username: "alice", token: "alice-token")
        let client = GlueFixture.client(server.httpServer(), token: "alice-token")
        return try await MastodonCapabilities.fetch(with: client)
    }

    @Test func aVAPIDKeyThatAppearsOrVanishesChangesAMastodonAccountsChoice() async throws {
        let withKey = try await Self.capabilities(.mastodon)
        let withoutKey = try await Self.capabilities(.pleroma)
        #expect(withKey.offersWebPush && !withoutKey.offersWebPush)
        let account = PushAccount.mastodon(key: "alice@sandbox")
        for platform in [PushRegistrationChoice.Platform.apple, .unifiedPush] {
            #expect(account.registration(on: platform, capabilities: withKey) == .mastodonWebPush)
            #expect(account.registration(on: platform, capabilities: withoutKey) == .none, "the key vanished")
            #expect(account.registration(on: platform, capabilities: nil) == .mastodonWebPush, "not read yet")
        }
        #expect(account.registration(on: .noPushService, capabilities: withKey) == .none)
    }

    @Test func aNextcloudSocialAccountsChoiceNeverReadsIt() async throws {
        let social = try await Self.capabilities(.nextcloud)
        #expect(!social.offersWebPush)
        let connected = NextcloudConnectionState.connected(
            NextcloudPushCapabilities(push: ["devices", "object-data", "delete", "webpush"]))
        // Social's empty `vapid_key` says nothing about the Nextcloud underneath: proxy and Web Push stay.
        #expect(
            PushRegistrationChoice.choose(
                account: .nextcloudSocial, platform: .apple, nextcloud: connected, capabilities: social)
                == .nextcloudProxy)
        #expect(
            PushRegistrationChoice.choose(
                account: .nextcloudSocial, platform: .unifiedPush, nextcloud: connected, capabilities: social)
                == .nextcloudWebPush)
    }
}
