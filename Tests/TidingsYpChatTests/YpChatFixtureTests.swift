import Foundation
import Testing
import TidingsCore
import TidingsSandbox
import TidingsYpChat

/// The shared payload fixtures (Tests/Fixtures/ypchat, see its README): each decodes with the client,
/// and what the sandbox writes has the fixture's fields. The python peer builds its payloads from the
/// same files.
@Suite(.timeLimit(.minutes(1))) struct YpChatFixtureTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/ypchat")

    static func data(_ name: String) throws -> Data { try Data(contentsOf: directory.appendingPathComponent(name)) }
    static func json(_ name: String) throws -> JSONValue { try JSONValue(parsing: try data(name)) }
    static func keys(_ value: JSONValue) -> Set<String> { Set(value.objectValue?.keys.map { $0 } ?? []) }
    static func keys(encoding value: some Encodable) throws -> Set<String> {
        keys(try JSONValue(parsing: try JSONEncoder().encode(value)))
    }
    static func event(_ name: String, _ file: String) throws -> YpChatSocketEvent {
        YpChatSocketEvent(name: name, arguments: [try json(file)])
    }

    static let covered: Set<String> = [
        "user.json", "message.json", "image-message.json", "message-sent.json", "conversation.json",
        "conversation-summary.json", "unread-chats.json", "command-table.json", "command-result.json", "error.json",
        "session.json", "countries.json", "partners.json", "feedback.json", "admin-status.json", "upload.json",
    ]

    @Test func everyFixtureFileHasADecodingTest() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.directory.path).filter {
            $0.hasSuffix(".json")
        }
        #expect(Set(files) == Self.covered)
    }

    @Test func socketPayloads() throws {
        let user = try #require(YpChatUser(json: try Self.json("user.json")))
        #expect(user == YpChatUser(userName: "anna", gender: "w", age: 30, country: "DE"))
        #expect(Self.keys(user.json) == Self.keys(try Self.json("user.json")))
        #expect(try Self.event("loginSuccess", "user.json") == .loginSuccess(user))

        for file in ["message.json", "image-message.json"] {
            let message = try #require(YpChatMessage(json: try Self.json(file)))
            #expect(message.fromUserName == "anna")
            #expect(message.messageId.flatMap(UUID.init(uuidString:)) != nil)
            #expect(Self.keys(message.json) == Self.keys(try Self.json(file)), "\(file)")
        }
        #expect(try #require(YpChatMessage(json: try Self.json("image-message.json"))).isImage)
        #expect(
            try Self.event("messageSent", "message-sent.json")
                == .messageSent(messageId: "3f2b9c1e-8d7a-4c55-9e0f-6a1b2c3d4e5f"))
        guard case .conversation(let partner, let messages) = try Self.event("conversation", "conversation.json") else {
            Issue.record("conversation.json is not a conversation")
            return
        }
        #expect(partner == "bob")
        #expect(messages.map(\.text) == ["Hallo Bob :)"])

        let summary = try #require(YpChatConversationSummary(json: try Self.json("conversation-summary.json")))
        #expect(summary == YpChatConversationSummary(userName: "bob", lastMessage: "Hallo Bob :)", unreadCount: 1))
        #expect(Self.keys(summary.json) == Self.keys(try Self.json("conversation-summary.json")))
        #expect(try Self.event("unreadChats", "unread-chats.json") == .unreadChats(2))
        let table = try #require(YpChatCommandTable(json: try Self.json("command-table.json")))
        #expect(table.rows.count == 2)
        #expect(Self.keys(table.json) == Self.keys(try Self.json("command-table.json")))
        #expect(
            try Self.event("commandResult", "command-result.json") == .commandResult("Befehle: /help, /users, /whoami"))
        #expect(try Self.event("error", "error.json") == .error("unknown command"))
    }

    @Test func restPayloadsAndTheSandboxsData() throws {
        let session = try JSONDecoder().decode(SessionDto.self, from: try Self.data("session.json"))
        #expect(session == SessionDto(loggedIn: true, userName: "anna", sessionId: "sandbox-session-1"))
        #expect(try Self.keys(encoding: session) == Self.keys(try Self.json("session.json")))

        let countries = try CountriesResponse(json: try Self.data("countries.json"))
        #expect(countries.entries.map(\.code) == ["DE", "AT", "CH", "BE"])
        #expect(YpChatSandboxState().countries == countries)

        let partners = try JSONDecoder().decode([PartnerLinkDto].self, from: try Self.data("partners.json"))
        #expect(partners == [PartnerLinkDto(pageName: "Tidings", url: "https://example.org/tidings")])
        #expect(YpChatSandboxState().partners == partners)
        #expect(
            try Self.keys(encoding: partners[0])
                == Self.keys(try #require(try Self.json("partners.json").arrayValue?.first)))

        let feedback = try JSONDecoder().decode(FeedbackDto.self, from: try Self.data("feedback.json"))
        #expect(
            feedback == FeedbackDto(id: "1", name: "anna", message: "Schöne App", createdAt: "2026-05-01T12:00:00Z"))
        #expect(try Self.keys(encoding: feedback) == Self.keys(try Self.json("feedback.json")))
        let admin = try JSONDecoder().decode(FeedbackAdminStatusDto.self, from: try Self.data("admin-status.json"))
        #expect(admin.isAdmin)
        #expect(try Self.keys(encoding: admin) == Self.keys(try Self.json("admin-status.json")))
        let upload = try JSONDecoder().decode(UploadImageResponse.self, from: try Self.data("upload.json"))
        #expect(upload.url == "/uploads/1")
        #expect(try Self.keys(encoding: upload) == Self.keys(try Self.json("upload.json")))
    }
}
