import Foundation
import Testing
import TidingsCore
import TidingsNet

@testable import TidingsMastodon

/// Capabilities from v2 with the v1 fallback, Nextcloud Social's signals, version checks, and the
/// tier policy.
@Suite(.timeLimit(.minutes(1)))
struct MastodonCapabilitiesTests {
    static let v2 =
        #"{"domain":"social.example","version":"4.3.2","configuration":{"urls":{"streaming":"wss://social.example"},"vapid":{"public_key":"BKey"},"statuses":{"max_characters":500}}}"#
    static let v1 =
        #"{"uri":"social.example","version":"4.1.0","urls":{"streaming_api":"wss://old.example"},"vapid_key":"BOld"}"#
    static let nextcloud = #"{"uri":"cloud.example","title":"Social","version":"2.7.0","urls":{},"vapid_key":""}"#

    @Test func version2IsPreferred() async throws {
        let transport = ScriptedTransport {
            $0.url.path == "/api/v2/instance" ? (200, [:], Self.v2) : (200, [:], Self.v1)
        }
        let capabilities = try await MastodonCapabilities.fetch(with: transport.client())
        #expect(capabilities.source == .version2)
        #expect(capabilities.streamingURL?.absoluteString == "wss://social.example")
        #expect(capabilities.vapidKey == "BKey")
        #expect(capabilities.supportsStatusesByID)
        #expect(capabilities.limits.maxCharacters == 500)
        #expect(transport.requests.count == 1)
    }

    @Test(arguments: [(404, Self.v1), (410, Self.v1), (200, "[not an instance"), (200, "[]")])
    func fallsBackToVersion1(status: Int, v2Body: String) async throws {
        let transport = ScriptedTransport {
            $0.url.path == "/api/v2/instance" ? (status == 200 ? 200 : status, [:], v2Body) : (200, [:], Self.v1)
        }
        let capabilities = try await MastodonCapabilities.fetch(with: transport.client())
        #expect(capabilities.source == .version1)
        #expect(capabilities.streamingURL?.absoluteString == "wss://old.example")
        #expect(capabilities.version == MastodonVersion(4, 1, 0))
        #expect(!capabilities.supportsStatusesByID)
        #expect(transport.requests.map(\.url.path) == ["/api/v2/instance", "/api/v1/instance"])
    }

    @Test func unauthorizedIsNotAFallback() async throws {
        let transport = ScriptedTransport { _ in (401, [:], "{}") }
        let client = transport.client()
        await #expect(throws: MastodonError.unauthorized) { try await MastodonCapabilities.fetch(with: client) }
        #expect(transport.requests.count == 1)
        #expect(client.authorization.authState == .needsReauthentication)
    }

    @Test func nextcloudSocialHasNoStreamingAndNoWebPush() async throws {
        let transport = ScriptedTransport {
            $0.url.path == "/api/v2/instance" ? (404, [:], "{}") : (200, [:], Self.nextcloud)
        }
        let capabilities = try await MastodonCapabilities.fetch(with: transport.client())
        #expect(capabilities.isNextcloudSocial)
        #expect(!capabilities.offersStreaming)
        #expect(!capabilities.offersWebPush)
        #expect(capabilities.maximumPageLimit == 50)
        #expect(!capabilities.supportsStatusesByID)
        let app = MastodonAppState(foreground: true, online: true, isActiveAccount: true)
        let tiers = MastodonTierPolicy.tiers(capabilities: capabilities, app: app, push: .none, auth: .signedIn)
        #expect(tiers == MastodonTiers(push: false, streaming: false, polling: .adaptive))
    }

    @Test func versionsParseWithoutTrapping() {
        #expect(MastodonVersion(parsing: "4.5.0-nightly.2025-07-11") == MastodonVersion(4, 5, 0))
        #expect(MastodonVersion(parsing: "2.7.2 (compatible; Pleroma 2.5.0)") == MastodonVersion(2, 7, 2))
        #expect(MastodonVersion(parsing: "4.3") == MastodonVersion(4, 3, 0))
        #expect(MastodonVersion(parsing: "GoToSocial") == nil)
        #expect(MastodonVersion(parsing: String(repeating: "9", count: 40)) == nil)
        #expect(MastodonVersion(4, 2, 10) < MastodonVersion(4, 3, 0))
    }

    @Test func tiersCompose() throws {
        let mastodon = MastodonCapabilities(try MastodonWire.decode(MastodonInstanceV2.self, from: Data(Self.v2.utf8)))
        func tiers(
            _ foreground: Bool, _ online: Bool, _ active: Bool, _ push: MastodonPushRegistration,
            _ auth: MastodonAuthState = .signedIn
        ) -> MastodonTiers {
            MastodonTierPolicy.tiers(
                capabilities: mastodon,
                app: MastodonAppState(foreground: foreground, online: online, isActiveAccount: active),
                push: push, auth: auth)
        }
        #expect(
            tiers(true, true, true, .none)
                == MastodonTiers(push: false, streaming: true, polling: .safetyNet(minutes: 5)))
        #expect(
            tiers(true, true, true, .active)
                == MastodonTiers(push: true, streaming: true, polling: .safetyNet(minutes: 10)))
        #expect(tiers(true, true, false, .none) == MastodonTiers(push: false, streaming: false, polling: .adaptive))
        #expect(
            tiers(false, true, true, .active)
                == MastodonTiers(push: true, streaming: false, polling: .backgroundRefresh))
        #expect(tiers(true, false, true, .none) == MastodonTiers(push: false, streaming: false, polling: .stopped))
        #expect(
            tiers(true, true, true, .active, .needsReauthentication)
                == MastodonTiers(push: false, streaming: false, polling: .stopped))
    }
}
