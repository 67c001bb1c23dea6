import Foundation
import Testing
import TidingsCore
import TidingsSandbox

@testable import TidingsOpenMates

/// The sandbox's prefetch endpoint keeps the public server's rules, so the client meets them in every test.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesSandboxPrefetchEndpointTests {
    static func post(
        _ endpoint: OpenMatesSandboxPrefetchEndpoint, _ body: String, cookie: String? = nil
    ) async -> (status: Int, json: JSONValue?, headers: [String: String]) {
        let reply = await endpoint.send(body: Data(body.utf8), cookie: cookie)
        return (reply.status, try? JSONValue(parsing: reply.body), reply.headers)
    }

    static func row(_ json: JSONValue?, _ index: Int) -> JSONValue? {
        json?["chats"]?.arrayValue.flatMap { index < $0.count ? $0[index] : nil }
    }

    static func ids(_ json: JSONValue?) -> [String] {
        (json?["chats"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
    }

    @Test func theRefreshTokenCookieIsRequired() async {
        let server = await seededServer(parents: 12)
        let endpoint = OpenMatesSandboxPrefetchEndpoint(server: server, clock: TestClock())
        #expect(await Self.post(endpoint, "{}").status == 401)
        #expect(await Self.post(endpoint, "{}", cookie: "auth_refresh_token=wrong").status == 401)
        #expect(await Self.post(endpoint, "{}", cookie: "other=\(server.token)").status == 401)
        let answer = await Self.post(endpoint, "{}", cookie: "theme=dark; auth_refresh_token=\(server.token)")
        #expect(answer.status == 200)
        #expect(Self.ids(answer.json) == ["chat-010", "chat-011"])
    }

    @Test(arguments: [
        #"{"cursor": 9}"#, #"{"cursor": 101}"#, #"{"cursor": "10"}"#, #"{"limit": 0}"#, #"{"limit": 6}"#,
        #"{"limit": 2.5}"#, #"{"include_embeds": "yes"}"#, "[1]", "not json",
    ])
    func invalidBodiesAre422(body: String) async {
        let server = await seededServer(parents: 12)
        let endpoint = OpenMatesSandboxPrefetchEndpoint(server: server, clock: TestClock())
        #expect(await Self.post(endpoint, body, cookie: "auth_refresh_token=\(server.token)").status == 422)
    }

    @Test func thirtyAMinuteThen429WithRetryAfter() async {
        let clock = TestClock()
        let server = await seededServer(parents: 12)
        let endpoint = OpenMatesSandboxPrefetchEndpoint(server: server, clock: clock)
        let cookie = "auth_refresh_token=\(server.token)"
        for second in 0..<30 {
            #expect(await Self.post(endpoint, "{}", cookie: cookie).status == 200)
            if second < 29 { await clock.advance(by: .seconds(1)) }
        }
        let refused = await Self.post(endpoint, "{}", cookie: cookie)
        #expect(refused.status == 429)
        // The first request (at 0 s) leaves the window at 60 s; now is 29 s.
        #expect(refused.headers["Retry-After"] == "31")
        await clock.advance(by: .seconds(30))
        #expect(await Self.post(endpoint, "{}", cookie: cookie).status == 429)
        await clock.advance(by: .seconds(1))
        #expect(await Self.post(endpoint, "{}", cookie: cookie).status == 200)
    }

    @Test func theCursorIsAnOffsetOverEveryChatSubChatsIncludedWithDoneOnTheLastPage() async {
        // chat-000 and its 3 sub-chats are newest: offsets 0…3, then chat-001 … chat-011 at 4…14.
        let server = await seededServer(parents: 12, subChatsOfNewest: 3)
        let endpoint = OpenMatesSandboxPrefetchEndpoint(server: server, clock: TestClock())
        let cookie = "auth_refresh_token=\(server.token)"
        let first = await Self.post(endpoint, #"{"cursor": 10, "limit": 3}"#, cookie: cookie)
        #expect(Self.ids(first.json) == ["chat-007", "chat-008", "chat-009"])
        #expect(first.json?["next_cursor"] == 13 && first.json?["done"] == false)
        #expect(Self.row(first.json, 0)?["parent_chat_id"] == .null)
        let last = await Self.post(endpoint, #"{"cursor": 13, "limit": 3}"#, cookie: cookie)
        #expect(Self.ids(last.json) == ["chat-010", "chat-011"])
        #expect(last.json?["next_cursor"] == 15 && last.json?["done"] == true)
        let messages = last.json?["messages_by_chat_id"]?["chat-010"]?.arrayValue ?? []
        #expect(messages.count == 3)
        #expect(last.json?["versions_by_chat_id"]?["chat-010"]?["messages_v"] == 3)
        #expect(last.json?["embeds"] == nil)
        let embeds = await Self.post(endpoint, #"{"cursor": 13, "include_embeds": true}"#, cookie: cookie)
        #expect(embeds.json?["embeds"]?.arrayValue?.count == 2 && embeds.json?["embed_keys"]?.arrayValue?.count == 2)
    }

    @Test func deletedChatsLeaveTheOrderAndHiddenOnesAreFlagged() async throws {
        let server = await seededServer(parents: 14)
        var hidden = try #require(await server.chats["chat-011"])
        hidden.hidden = true
        await server.put(hidden)
        await server.deleteChat("chat-010")
        let endpoint = OpenMatesSandboxPrefetchEndpoint(server: server, clock: TestClock())
        let page = await Self.post(endpoint, #"{"cursor": 10}"#, cookie: "auth_refresh_token=\(server.token)")
        #expect(Self.ids(page.json) == ["chat-011", "chat-012", "chat-013"])
        #expect(Self.row(page.json, 0)?["is_hidden"] == true)
        #expect(Self.row(page.json, 1)?["is_hidden"] == false)
    }

    @Test func variantsShortPagesDoneOnAnExtraEmptyPageAndRepeatedPhase1bChats() async {
        let server = await seededServer(parents: 14)
        let endpoint = OpenMatesSandboxPrefetchEndpoint(server: server, clock: TestClock())
        let cookie = "auth_refresh_token=\(server.token)"
        endpoint.variant.shortPages = true
        let short = await Self.post(endpoint, #"{"cursor": 10, "limit": 3}"#, cookie: cookie)
        #expect(Self.ids(short.json) == ["chat-010", "chat-011"] && short.json?["next_cursor"] == 12)
        endpoint.variant = OpenMatesSandboxPrefetchVariant()
        endpoint.variant.doneOnExtraEmptyPage = true
        let full = await Self.post(endpoint, #"{"cursor": 11, "limit": 3}"#, cookie: cookie)
        #expect(full.json?["next_cursor"] == 14 && full.json?["done"] == false)
        let empty = await Self.post(endpoint, #"{"cursor": 14, "limit": 3}"#, cookie: cookie)
        #expect(Self.ids(empty.json).isEmpty && empty.json?["done"] == true)
        endpoint.variant = OpenMatesSandboxPrefetchVariant()
        endpoint.variant.repeatPhase1bChats = true
        let repeated = await Self.post(endpoint, #"{"cursor": 10, "limit": 2}"#, cookie: cookie)
        #expect(Self.ids(repeated.json) == ["chat-000", "chat-001", "chat-010", "chat-011"])
        #expect(repeated.json?["next_cursor"] == 12)
    }
}
