import Foundation
import Testing
import TidingsCore
import TidingsNet

@testable import TidingsMastodon

/// Every example the Mastodon OpenAPI document gives for the wire types decodes, element by element
/// (no element may be skipped: a skip here means the decoder is stricter than the real API).
@Suite(.timeLimit(.minutes(1)))
struct OpenAPIExampleTests {
    private static func document() throws -> JSONValue {
        try JSONValue(parsing: try MastodonFixtures.data(named: "mastodon-openapi.json"))
    }

    /// The JSON of `components.examples.<name>.value`.
    private static func example(_ name: String) throws -> Data {
        let value = try #require(try document()["components"]?["examples"]?[name]?["value"])
        return Data(value.jsonString().utf8)
    }

    /// The JSON of `components.schemas.<name>.example`.
    private static func schemaExample(_ name: String) throws -> Data {
        let value = try #require(try document()["components"]?["schemas"]?[name]?["example"])
        return Data(value.jsonString().utf8)
    }

    private func decodeAll<T: Decodable>(_ type: T.Type, _ body: Data) throws -> [T] {
        let list = try MastodonWire.decodeList(T.self, from: body)
        #expect(list.skipped == 0, "an example element of \(T.self) did not decode")
        return list.elements
    }

    @Test func statusExamplesDecode() throws {
        let statuses = try decodeAll(MastodonStatus.self, try Self.example("Status200Example"))
        #expect(statuses.first?.id == "108880211901672326")
        #expect(statuses.first?.inReplyToAccountID == "103641")
        #expect(statuses.first?.createdAt != nil)
        let full = try MastodonWire.decode(MastodonStatus.self, from: try Self.schemaExample("Status"))
        #expect(full.account != nil)
        #expect(full.visibility != nil)
    }

    @Test func accountExamplesDecode() throws {
        let accounts = try decodeAll(MastodonAccount.self, try Self.example("Account200Example"))
        #expect(accounts.first?.acct == "Gargron")
        #expect(accounts.first?.avatar != nil)
        let single = try MastodonWire.decode(MastodonAccount.self, from: try Self.schemaExample("Account"))
        #expect(!single.id.rawValue.isEmpty)
    }

    @Test func notificationExamplesDecode() throws {
        let notifications = try decodeAll(MastodonNotification.self, try Self.example("Notification200Example"))
        #expect(notifications.map(\.type) == [.mention, .favourite])
        #expect(notifications.first?.status?.mentions.first?.acct == "trwnh")
    }

    @Test func groupedNotificationsExampleDecodes() throws {
        let page = try MastodonWire.decode(
            MastodonGroupedNotifications.self, from: try Self.example("GroupedNotificationsResults200Example"))
        #expect(page.notificationGroups.count == 2)
        #expect(page.accounts.count == 4)
        #expect(page.statuses.count == 2)
        // Sent as the JSON number 196014.
        #expect(page.notificationGroups.first?.mostRecentNotificationID == "196014")
        #expect(page.notificationGroups.first.flatMap { $0.statusID.flatMap(page.status) } != nil)
    }

    @Test func markerExamplesDecode() throws {
        let single = try MastodonWire.decode(MastodonMarker.self, from: try Self.schemaExample("Marker"))
        #expect(single.version > 0)
        let response = try #require(
            try Self.document()["paths"]?["/api/v1/markers"]?["get"]?["responses"]?["200"]?["content"]?[
                "application/json"]?["example"])
        let markers = try MastodonWire.decode(MastodonMarkers.self, from: Data(response.jsonString().utf8))
        #expect(markers.home?.lastReadID == "103206604258487607")
        #expect(markers.notifications?.lastReadID == "35098814")
        #expect(markers.notifications?.version == 361)
    }

    @Test func instanceExamplesDecode() throws {
        for body in [try Self.example("Instance200Example"), try Self.schemaExample("Instance")] {
            let instance = try MastodonWire.decode(MastodonInstanceV2.self, from: body)
            #expect(instance.streamingURL?.absoluteString == "wss://streaming.mastodon.social")
            #expect(instance.vapidPublicKey?.isEmpty == false)
            #expect(instance.version.hasPrefix("4."))
            #expect(instance.limits.maxCharacters == 500)
        }
        for body in [try Self.example("V1Instance200Example"), try Self.schemaExample("V1Instance")] {
            let instance = try MastodonWire.decode(MastodonInstanceV1.self, from: body)
            #expect(instance.streamingAPI?.absoluteString == "wss://mastodon.social")
            #expect(instance.version == "3.5.3")
            #expect(instance.limits.maxCharacters == 500)
        }
    }

    /// `vote(poll:choices:)` answers a Poll; a status's `poll` is one too.
    @Test func pollExamplesDecode() throws {
        for body in [try Self.example("Poll200Example"), try Self.schemaExample("Poll")] {
            let poll = try MastodonWire.decode(MastodonPoll.self, from: body)
            #expect(poll.id == "34830")
            let expiry = try #require(poll.expiresAt).timeIntervalSince1970
            #expect(abs(expiry - 1_575_518_708.302) < 0.001, "2019-12-05T04:05:08.302Z")
            #expect(poll.expired && !poll.multiple)
            #expect(poll.voted == true && poll.ownVotes == [1])
            #expect(poll.options.map(\.title) == ["accept", "deny"])
            #expect(poll.options.map(\.votesCount) == [6, 4])
        }
    }

    @Test func mediaAttachmentExampleDecodes() throws {
        let media = try MastodonWire.decode(
            MastodonMediaAttachment.self, from: try Self.example("MediaAttachment200Example"))
        #expect(media.id == "22348641")
        #expect(media.type == .image)
        #expect(media.url?.lastPathComponent == "cebc6d51be03e509.jpeg")
        #expect(media.previewURL?.path.contains("/small/") == true)
        #expect(media.description == "test uploaded via api")
        #expect(media.blurhash == "UFBWY:8_0Jxv4mx]t8t64.%M-:IUWGWAt6M}")
    }

    /// `setFollowing(_:account:)` reads a Relationship: following (or requested) is what it reports.
    @Test(arguments: [("Relationship200Example", false), ("schema", true)])
    func relationshipExamplesAnswerSetFollowing(_ example: (name: String, following: Bool)) async throws {
        let body = try example.name == "schema" ? Self.schemaExample("Relationship") : Self.example(example.name)
        let json = String(decoding: body, as: UTF8.self)
        let transport = ScriptedTransport { _ in (200, [:], json) }
        #expect(try await transport.client().setFollowing(true, account: "3") == example.following)
        #expect(transport.requests.map(\.url.path) == ["/api/v1/accounts/3/follow"])
    }

    @Test func unreadCountExampleDecodes() throws {
        let count = try MastodonWire.decode(MastodonUnreadCount.self, from: try Self.example("CountResponse200Example"))
        #expect(count.count == 42)
    }
}
