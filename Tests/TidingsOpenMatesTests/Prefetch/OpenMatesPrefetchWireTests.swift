import Foundation
import Testing
import TidingsCore

@testable import TidingsOpenMates

/// The prefetch request and page: flat rows, `done` on a page of its own, and hostile bodies as typed errors.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesPrefetchWireTests {
    @Test func theRequestIsClampedToTheRangesTheServerAccepts() throws {
        #expect(OpenMatesPrefetchRequest().json == ["cursor": 10, "limit": 3, "include_embeds": true])
        #expect(OpenMatesPrefetchRequest(cursor: 3, limit: 0).cursor == 10)
        #expect(OpenMatesPrefetchRequest(cursor: 3, limit: 0).limit == 1)
        #expect(OpenMatesPrefetchRequest(cursor: 400, limit: 9).cursor == 100)
        #expect(OpenMatesPrefetchRequest(cursor: 400, limit: 9).limit == 5)
        let body = try JSONValue(parsing: OpenMatesPrefetchRequest(cursor: 13, includeEmbeds: false).body)
        #expect(body == ["cursor": 13, "limit": 3, "include_embeds": false])
    }

    @Test func flatRowsAndKeyedContentDecode() throws {
        let body = """
            {"chats": [{"id": "c1", "messages_v": 4, "title_v": 2, "encrypted_title": "t", "is_hidden": false,
                        "last_edited_overall_timestamp": 99, "parent_chat_id": null, "encrypted_chat_key": "k",
                        "unread_count": 1},
                       {"id": "c2", "parent_chat_id": "c1", "messages_v": 1, "is_hidden": true},
                       {"no_id": true}, 7],
             "messages_by_chat_id": {"c1": [{"message_id": "m1", "role": "user", "created_at": 5},
                                            "{\\"message_id\\": \\"m2\\", \\"role\\": \\"assistant\\"}", 3]},
             "versions_by_chat_id": {"c1": {"messages_v": 4, "server_message_count": 2}},
             "embeds": [{"embed_id": "e1", "hashed_chat_id": "h"}], "next_cursor": 13, "done": false}
            """
        let page = try OpenMatesPrefetchPage(body: Data(body.utf8))
        #expect(page.chats.map(\.chatID) == ["c1", "c2"])
        #expect(page.chats[0].messagesV == 4 && page.chats[0].titleV == 2 && page.chats[0].encryptedChatKey == "k")
        #expect(page.chats[1].isSub && page.chats[1].hidden == true)
        #expect(page.content.count == 1)
        #expect(page.content[0].messages?.map(\.messageID) == ["m1", "m2"])
        #expect(page.content[0].messagesV == 4 && page.content[0].serverMessageCount == 2)
        #expect(page.side.embeds.count == 1)
        #expect(page.nextCursor == 13 && !page.done)
        #expect(page.dropped == 3)
    }

    @Test func doneMayComeOnAnEmptyPage() throws {
        let page = try OpenMatesPrefetchPage(body: Data(#"{"chats": [], "done": true}"#.utf8))
        #expect(page.done && page.chats.isEmpty && page.content.isEmpty && page.nextCursor == nil)
        let withCursor = try OpenMatesPrefetchPage(body: Data(#"{"chats": [], "next_cursor": 40, "done": true}"#.utf8))
        #expect(withCursor.done && withCursor.nextCursor == 40)
    }

    @Test(arguments: [
        "", "not json", "[1, 2]", "\"text\"", "{}", #"{"chats": {}, "done": true}"#,
        #"{"chats": [], "done": "yes"}"#, #"{"chats": [], "next_cursor": -1}"#,
        #"{"chats": [], "next_cursor": "13"}"#, #"{"chats": [], "next_cursor": 1.5}"#,
        #"{"messages_by_chat_id": [], "done": true}"#, #"{"versions_by_chat_id": 3, "done": true}"#,
        #"{"chats": [], "next_cursor": 99999999999999999999999}"#,
        String(repeating: "[", count: 100) + String(repeating: "]", count: 100),
        #"{"chats": ["# + String(repeating: "[", count: 70) + String(repeating: "]", count: 70) + #"], "done": true}"#,
    ])
    func hostileBodiesAreTypedErrors(body: String) {
        #expect(throws: OpenMatesPrefetchError.malformedPage) { try OpenMatesPrefetchPage(body: Data(body.utf8)) }
    }

    @Test func anOversizedBodyIsRefusedBeforeParsing() {
        let body = Data(repeating: 0x20, count: OpenMatesPrefetchPage.maximumBodySize + 1)
        #expect(throws: OpenMatesPrefetchError.malformedPage) { try OpenMatesPrefetchPage(body: body) }
    }

    @Test func theHTTPTransportRefusesABadOriginOrATokenThatIsNotACookieValue() throws {
        let origin = try #require(URL(string: "https://api.example.org"))
        #expect(throws: OpenMatesPrefetchError.invalidConfiguration) {
            try OpenMatesPrefetchHTTPTransport(origin: try #require(URL(string: "ftp://x.org")), refreshToken: "t")
        }
        for token in ["", "a;b", "a b", "a\r\nX-Evil: 1", "é"] {
            do {
                _ = try OpenMatesPrefetchHTTPTransport(origin: origin, refreshToken: token)
                Issue.record("accepted a token that cannot be a cookie value")
            } catch {
                #expect(error == .invalidConfiguration)
                #expect(token.isEmpty || !"\(error)".contains(token))
            }
        }
        let transport = try OpenMatesPrefetchHTTPTransport(origin: origin, refreshToken: "abc.DEF-123")
        #expect(transport.url.absoluteString == "https://api.example.org/v1/sync/offline-prefetch")
        #expect(transport.host == "api.example.org")
    }
}
