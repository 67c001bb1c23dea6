import Foundation
import Testing
import TidingsYpChat

@Suite(.timeLimit(.minutes(1))) struct YpChatConfigurationTests {
    @Test func defaultIsTheProductionServer() throws {
        let configuration = try YpChatConfiguration()
        #expect(configuration.baseURL.absoluteString == "https://www.ypchat.net")
        #expect(configuration.url("api/session").absoluteString == "https://www.ypchat.net/api/session")
        #expect(configuration.socketPath == "/socket.io/")
    }

    @Test func trailingSlashesAreRemoved() throws {
        let configuration = try YpChatConfiguration(baseURL: "https://staging.ypchat.net/chat//")
        #expect(configuration.baseURL.absoluteString == "https://staging.ypchat.net/chat")
        #expect(configuration.url("/api/countries").absoluteString == "https://staging.ypchat.net/chat/api/countries")
    }

    @Test func plainHTTPIsRefusedUnlessAllowed() throws {
        #expect(throws: YpChatError.invalidConfiguration) { try YpChatConfiguration(baseURL: "http://10.0.2.2:3000") }
        let allowed = try YpChatConfiguration(baseURL: "http://10.0.2.2:3000/", allowsInsecureHTTP: true)
        #expect(allowed.baseURL.absoluteString == "http://10.0.2.2:3000")
    }

    @Test(arguments: [
        "", "www.ypchat.net", "ftp://www.ypchat.net", "https://www.ypchat.net/?token=x", "https://u:p@h.net",
    ])
    func unusableBaseURLsAreRefused(_ text: String) {
        #expect(throws: YpChatError.invalidConfiguration) { try YpChatConfiguration(baseURL: text) }
    }

    @Test func runTimeOverridesBuildWhichOverridesDefault() throws {
        let build: [String: Any] = ["BASE_URL": "https://build.example/"]
        let environment = ["YPCHAT_BASE_URL": "https://runtime.example"]
        #expect(
            try YpChatConfiguration.resolved(environment: environment, infoDictionary: build).baseURL.absoluteString
                == "https://runtime.example")
        #expect(
            try YpChatConfiguration.resolved(environment: [:], infoDictionary: build).baseURL.absoluteString
                == "https://build.example")
        #expect(
            try YpChatConfiguration.resolved(environment: ["YPCHAT_BASE_URL": ""], infoDictionary: nil).baseURL
                .absoluteString == "https://www.ypchat.net")
        // A broken override fails instead of silently reaching another server.
        #expect(throws: YpChatError.invalidConfiguration) {
            try YpChatConfiguration.resolved(environment: ["YPCHAT_BASE_URL": "http://x.example"], infoDictionary: nil)
        }
    }

    @Test func relativeImageURLsGetTheBaseURL() throws {
        let configuration = try YpChatConfiguration(baseURL: "https://www.ypchat.net/")
        #expect(configuration.absoluteURL("/uploads/a.jpg")?.absoluteString == "https://www.ypchat.net/uploads/a.jpg")
        #expect(configuration.absoluteURL("uploads/a.jpg")?.absoluteString == "https://www.ypchat.net/uploads/a.jpg")
        #expect(configuration.absoluteURL("https://cdn.example/a.jpg")?.absoluteString == "https://cdn.example/a.jpg")
        #expect(configuration.absoluteURL("") == nil)
    }
}
