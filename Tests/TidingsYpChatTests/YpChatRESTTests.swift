import Foundation
import Testing
import TidingsNet
import TidingsSandbox
import TidingsSandboxKit
import TidingsYpChat

/// The REST client against the Swift sandbox on a loopback port.
@Suite(.timeLimit(.minutes(1))) struct YpChatRESTTests {
    @Test(arguments: RESTPath.allCases) func sessionCookieIsKeptAndSentBack(_ path: RESTPath) async throws {
        let sandbox = try LoopbackYpChat(path: path)
        defer { sandbox.stop() }
        let first = try await sandbox.client.session()
        #expect(!first.loggedIn)
        let id = try #require(first.sessionId)
        #expect(sandbox.client.cookies.all.map(\.name) == ["connect.sid"])
        // The second call carries the cookie: the same session, no new cookie.
        #expect(try await sandbox.client.session().sessionId == id)
        #expect(sandbox.client.expressSessionID() == id)
        #expect(sandbox.client.expressSessionID(from: first) == id)
        // Another jar is another session.
        let other = try await sandbox.anotherClient().session()
        #expect(other.sessionId != id)
        // The server knows the session the cookie names.
        await sandbox.server.state.setUser("anna", session: id)
        #expect(try await sandbox.client.session() == SessionDto(loggedIn: true, userName: "anna", sessionId: id))
    }

    @Test(arguments: RESTPath.allCases) func logoutEndsTheSessionAndForgetsCookies(_ path: RESTPath) async throws {
        let sandbox = try LoopbackYpChat(path: path)
        defer { sandbox.stop() }
        let id = try #require(try await sandbox.client.session().sessionId)
        try await sandbox.client.logout()
        #expect(sandbox.client.cookies.all.isEmpty)
        #expect(await sandbox.server.state.session(id: id) == nil)
        #expect(try await sandbox.client.session().sessionId != id)
    }

    @Test(arguments: RESTPath.allCases) func countriesArriveInTheServersOrder(_ path: RESTPath) async throws {
        let sandbox = try LoopbackYpChat(path: path)
        defer { sandbox.stop() }
        let countries = try await sandbox.client.countries()
        #expect(countries.entries.map(\.code) == ["DE", "AT", "CH", "BE"])
        #expect(
            try await sandbox.client.partners() == [
                PartnerLinkDto(pageName: "Tidings", url: "https://example.org/tidings")
            ])
    }

    @Test(arguments: RESTPath.allCases) func feedbackAdminFlow(_ path: RESTPath) async throws {
        let sandbox = try LoopbackYpChat(path: path)
        defer { sandbox.stop() }
        let client = sandbox.client
        _ = try await client.session()
        try await client.sendFeedback(FeedbackRequest(name: "anna", message: "Schöne App"))
        let list = try await client.feedback()
        #expect(list.map(\.message) == ["Schöne App"])
        let id = try #require(list.first?.id)

        await #expect(throws: YpChatError.status) { try await client.sendFeedback(FeedbackRequest(message: "  ")) }
        do {
            try await client.deleteFeedback(id: id)
            Issue.record("a non-admin deleted feedback")
        } catch let error as YpChatError {
            #expect(error == .unauthorized)
            #expect(error.status == 403)
            #expect(error.message == "admin only")
        }
        do {
            _ = try await client.adminLogin(password: "wrong-secret")
            Issue.record("a wrong password logged in")
        } catch let error as YpChatError {
            #expect(error == .unauthorized)
            #expect(error.message == "wrong password")
            #expect(!error.description.contains("wrong-secret"))
        }
        #expect(try await !client.feedbackAdminStatus().isAdmin)
        #expect(try await client.adminLogin(password: "sandbox-admin").isAdmin)
        #expect(try await client.feedbackAdminStatus().isAdmin)
        await #expect(throws: YpChatError.status) { try await client.deleteFeedback(id: "999") }
        try await client.deleteFeedback(id: id)
        #expect(try await client.feedback().isEmpty)
        try await client.adminLogout()
        #expect(try await !client.feedbackAdminStatus().isAdmin)
    }

    @Test func uploadReturnsAnAbsoluteURLThatServesTheImage() async throws {
        let sandbox = try LoopbackYpChat()
        defer { sandbox.stop() }
        let bytes = Data((0..<1000).map { UInt8($0 % 251) })
        let url = try await sandbox.client.uploadImage(bytes, filename: "a.png", contentType: "image/png")
        #expect(url.absoluteString.hasPrefix(sandbox.listener.url.absoluteString.trimmingCharacters(in: ["/"])))
        #expect(url.path == "/uploads/1")
        let fetched = try await HTTPClient().send(HTTPRequest(url: url))
        #expect(fetched.body == bytes)
        #expect(fetched.headers["Content-Type"] == "image/png")
    }

    @Test(arguments: RESTPath.allCases) func imagesOverFiveMebibytesAreRefusedBeforeSending(_ path: RESTPath)
        async throws
    {
        let sandbox = try LoopbackYpChat(path: path)
        defer { sandbox.stop() }
        let limit = 5 * 1024 * 1024
        #expect(YpChatRESTClient.maximumImageBytes == limit)
        await #expect(throws: YpChatError.imageTooLarge) {
            _ = try await sandbox.client.uploadImage(Data(count: limit + 1))
        }
        #expect(sandbox.server.log.entries.isEmpty)
        _ = try await sandbox.client.uploadImage(Data(count: limit))
        #expect(sandbox.server.log.entries.map(\.status) == [200])
    }

    @Test(arguments: RESTPath.allCases) func statusesAndBodiesBecomeTypedErrors(_ path: RESTPath) async throws {
        let sandbox = try LoopbackYpChat(path: path)
        defer { sandbox.stop() }
        sandbox.server.faults.add(.status(503), on: .path("/api/countries"), times: 1)
        do {
            _ = try await sandbox.client.countries()
            Issue.record("a 503 decoded")
        } catch let error as YpChatError {
            #expect(error == .status)
            #expect(error.status == 503)
            #expect(error.operation == "GET api/countries")
            #expect(error.message == "sandbox fault: status 503")
        }
        sandbox.server.faults.add(.malformedBody, on: .path("/api/partners"), times: 1)
        await #expect(throws: YpChatError.decoding) { _ = try await sandbox.client.partners() }
        sandbox.server.faults.add(.dropMidResponse, on: .path("/api/session"), times: 1)
        await #expect(throws: YpChatError.transport) { _ = try await sandbox.client.session() }
        sandbox.listener.stop()
        if path == .loopback {
            await #expect(throws: YpChatError.transport) { _ = try await sandbox.client.session() }
        }
    }

    @Test func serverMessageIsReadFromJSONOrShortText() {
        #expect(YpChatRESTClient.serverMessageForTests(.json(#"{"error":"nope"}"#)) == "nope")
        #expect(YpChatRESTClient.serverMessageForTests(.json(#"{"message":"m"}"#)) == "m")
        #expect(YpChatRESTClient.serverMessageForTests(.json("Bad things")) == "Bad things")
        #expect(YpChatRESTClient.serverMessageForTests(.json("<html>500</html>")) == nil)
        #expect(YpChatRESTClient.serverMessageForTests(Data(count: 400)) == nil)
    }
}
