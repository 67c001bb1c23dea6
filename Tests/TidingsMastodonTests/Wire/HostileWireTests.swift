import Foundation
import Testing
import TidingsCore

@testable import TidingsMastodon

/// What real servers send that the OpenAPI examples do not: malformed elements, unknown kinds, number
/// IDs, three date forms, nulls, and hostile nesting.
@Suite(.timeLimit(.minutes(1)))
struct HostileWireTests {
    private func data(_ text: String) -> Data { Data(text.utf8) }

    @Test func oneMalformedStatusKeepsTheRestOfThePage() throws {
        let page = try MastodonWire.decodeList(
            MastodonStatus.self,
            from: data(#"[{"id":"3","content":"a"},{"content":"no id"},42,{"id":"1","content":"c"}]"#))
        #expect(page.elements.map(\.id) == ["3", "1"])
        #expect(page.skipped == 2)
    }

    @Test func malformedNestedElementsAreSkippedNotFatal() throws {
        let status = try MastodonWire.decode(
            MastodonStatus.self,
            from: data(
                #"{"id":"9","media_attachments":[{"type":"image"},{"id":"m1","type":"hologram"}],"mentions":"oops","poll":{"id":7,"options":[{"title":"a"},5]},"account":{"username":"no id"}}"#
            ))
        #expect(status.mediaAttachments.map(\.id) == ["m1"])
        #expect(status.mediaAttachments.first?.type == .unknown("hologram"))
        #expect(status.mentions.isEmpty)
        #expect(status.poll?.id == "7")
        #expect(status.poll?.options.map(\.title) == ["a"])
        #expect(status.account == nil)
    }

    @Test func unknownEnumValuesSurviveARoundTrip() throws {
        let notification = try MastodonWire.decode(
            MastodonNotification.self,
            from: data(#"{"id":"1","type":"emoji_reaction","status":{"id":"2","visibility":"local"}}"#))
        #expect(notification.type == .unknown("emoji_reaction"))
        #expect(notification.status?.visibility == .unknown("local"))
        let again = try MastodonWire.decode(
            MastodonNotification.self, from: try JSONEncoder().encode(notification))
        #expect(again == notification)
        #expect(again.type.rawValue == "emoji_reaction")
        #expect(MastodonNotificationType(rawValue: "follow_request") == .followRequest)
        #expect(MastodonNotificationType.adminSignUp.rawValue == "admin.sign_up")
    }

    @Test func numberIDsBecomeServerIDs() throws {
        let status = try MastodonWire.decode(
            MastodonStatus.self,
            from: data(
                #"{"id":109372890233021000,"in_reply_to_id":99,"account":{"id":12},"reblog":{"id":"01HZ8Q3K6V0W9X","account":{"id":"a"}}}"#
            ))
        #expect(status.id == "109372890233021000")
        #expect(status.inReplyToID == "99")
        #expect(status.account?.id == "12")
        #expect(status.reblog?.id == "01HZ8Q3K6V0W9X")
        #expect(ServerID("99") < status.id)
    }

    @Test func datesInThreeForms() throws {
        let page = try MastodonWire.decodeList(
            MastodonStatus.self,
            from: data(
                #"[{"id":"1","created_at":"2022-08-24T22:29:46.493Z"},{"id":"2","created_at":"2022-08-24T22:29:46Z"},{"id":"3","created_at":1661380186},{"id":"4","created_at":"2022-08-24T22:29:46+00:00"},{"id":"5","created_at":"yesterday"}]"#
            ))
        let seconds = page.elements.map { $0.createdAt?.timeIntervalSince1970 }
        #expect(seconds[0] == 1_661_380_186.493)
        #expect(seconds[1] == 1_661_380_186)
        #expect(seconds[2] == 1_661_380_186)
        #expect(seconds[3] == 1_661_380_186)
        #expect(seconds[4] == nil)
    }

    @Test func nullsMissingFieldsAndEmptyAvatar() throws {
        let status = try MastodonWire.decode(
            MastodonStatus.self,
            from: data(
                #"{"id":"1","content":null,"favourited":null,"edited_at":null,"account":{"id":"2","avatar":"","avatar_static":null,"display_name":null}}"#
            ))
        #expect(status.content == "")
        #expect(status.favourited == nil)
        #expect(status.editedAt == nil)
        #expect(status.account?.avatar == nil)
        #expect(status.account?.avatarStatic == nil)
        #expect(status.account?.displayName == "")
    }

    @Test func deepNestingIsATypedError() {
        let deep = String(repeating: #"{"reblog":"#, count: 200) + "null" + String(repeating: "}", count: 200)
        #expect(throws: MastodonError.decoding) {
            try MastodonWire.decode(MastodonStatus.self, from: data(deep))
        }
        #expect(throws: MastodonError.decoding) {
            try MastodonWire.decodeList(MastodonStatus.self, from: data(#"{"not":"a list"}"#))
        }
        #expect(throws: MastodonError.decoding) {
            try MastodonWire.decode(MastodonMarkers.self, from: data("not json"))
        }
    }

    @Test func nextcloudSocialInstanceSignalsNothing() throws {
        let instance = try MastodonWire.decode(
            MastodonInstanceV1.self,
            from: data(#"{"uri":"cloud.example","title":"Social","version":"2.7.0","urls":{},"vapid_key":""}"#))
        #expect(instance.urlsEmpty)
        #expect(instance.streamingAPI == nil)
        #expect(instance.vapidKey == "")
        let roundTrip = try MastodonWire.decode(MastodonInstanceV1.self, from: try JSONEncoder().encode(instance))
        #expect(roundTrip == instance)
    }
}
