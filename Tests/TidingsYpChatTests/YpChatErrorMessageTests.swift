import Foundation
import Testing
import TidingsCore
import TidingsNet
import TidingsSandboxKit
import TidingsYpChat

/// An HTTP status and body reach the screen through the repository: the server's own words when the
/// body carries them, else the catalogue's message for the status; feedback operations report into
/// `feedbackMessage`, everything else into `errorMessage`.
@Suite(.timeLimit(.minutes(1))) struct YpChatErrorMessageTests {
    /// A server answering every request with `status` and `body`.
    static func repository(status: Int, body: String) throws -> (YpChatRepository, SandboxHTTPListener) {
        let http = SandboxHTTPServer { _ in
            SandboxHTTPResponse(status: status, headers: ["Content-Type": "text/html"], body: Data(body.utf8))
        }
        let listener = try http.serve()
        let rest = YpChatRESTClient(
            configuration: try YpChatConfiguration(
                baseURL: "http://127.0.0.1:\(listener.url.port ?? 0)", allowsInsecureHTTP: true))
        return (YpChatRepository(rest: rest), listener)
    }

    @Test func aBodyWithAMessageIsShownAsTheServerWroteIt() async throws {
        let (repository, listener) = try Self.repository(status: 500, body: #"{"error":"Datenbank nicht erreichbar"}"#)
        defer { listener.stop() }
        await repository.loadCountries()
        var state = await repository.state
        #expect(state.errorMessage == .server("Datenbank nicht erreichbar"))
        #expect(!state.loading.countries)
        await repository.loadFeedback()
        state = await repository.state
        #expect(state.feedbackMessage == .server("Datenbank nicht erreichbar"))
        #expect(!state.loading.feedback)
    }

    @Test func aStatusWithoutAMessageGetsTheCataloguesText() async throws {
        let (repository, listener) = try Self.repository(status: 502, body: "<html><body>Bad Gateway</body></html>")
        defer { listener.stop() }
        await repository.loadPartners()
        let state = await repository.state
        #expect(state.errorMessage == .localized(.errorServer, arguments: ["502"]))
        #expect(state.errorMessage?.text(in: .german) == "Serverfehler (502).")
        #expect(state.feedbackMessage == nil)
        #expect(!state.loading.partners)
    }

    @Test func unauthorizedWithoutAMessageSaysSo() async throws {
        let (repository, listener) = try Self.repository(status: 401, body: "<html>401</html>")
        defer { listener.stop() }
        await repository.sendFeedback(FeedbackRequest(message: "hallo"))
        let state = await repository.state
        #expect(state.feedbackMessage == .key(.errorUnauthorized))
        #expect(state.errorMessage == nil)
    }
}
