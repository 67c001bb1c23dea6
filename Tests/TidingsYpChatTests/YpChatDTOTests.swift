import Foundation
import Testing
import TidingsYpChat

@Suite(.timeLimit(.minutes(1))) struct YpChatDTOTests {
    let decoder = JSONDecoder()

    @Test func sessionDecodesLenientlyAndIgnoresUnknownFields() throws {
        let full = try decoder.decode(
            SessionDto.self, from: .json(#"{"loggedIn":true,"userName":"anna","sessionId":"abc","extra":[1]}"#))
        #expect(full == SessionDto(loggedIn: true, userName: "anna", sessionId: "abc"))
        let alias = try decoder.decode(SessionDto.self, from: .json(#"{"username":"bob","expressSessionId":"x"}"#))
        #expect(alias == SessionDto(loggedIn: true, userName: "bob", sessionId: "x"))
        #expect(try decoder.decode(SessionDto.self, from: .json("{}")) == SessionDto())
    }

    @Test func feedbackTakesNumericIDsAndMissingFields() throws {
        let list = try decoder.decode(
            [FeedbackDto].self,
            from: .json(#"[{"id":7,"name":"a","message":"hi","createdAt":"2026-05-01"},{"id":"x8"},{"message":"m"}]"#))
        #expect(list[0] == FeedbackDto(id: "7", name: "a", message: "hi", createdAt: "2026-05-01"))
        #expect(list[1] == FeedbackDto(id: "x8", message: ""))
        #expect(list[2] == FeedbackDto(id: "", message: "m"))
    }

    @Test func partnerLinkUsesThePageNameKeyWithItsSpace() throws {
        let links = try decoder.decode(
            [PartnerLinkDto].self,
            from: .json(#"[{"Page Name":"Friends","URL":"https://f.example"},{"Page Name":"NoLink"},{"url":"u"}]"#))
        #expect(
            links == [
                .init(pageName: "Friends", url: "https://f.example"), .init(pageName: "NoLink", url: ""),
                .init(pageName: "", url: "u"),
            ])
        let encoded = try JSONSerialization.jsonObject(with: JSONEncoder().encode(links[0])) as? [String: String]
        #expect(encoded?["Page Name"] == "Friends")
    }

    @Test func adminStatusDefaultsToNotAdmin() throws {
        #expect(try decoder.decode(FeedbackAdminStatusDto.self, from: .json(#"{"isAdmin":true}"#)).isAdmin)
        #expect(try decoder.decode(FeedbackAdminStatusDto.self, from: .json(#"{"admin":1}"#)).isAdmin)
        #expect(try !decoder.decode(FeedbackAdminStatusDto.self, from: .json("{}")).isAdmin)
    }

    @Test func uploadAnswerNeedsAnAddress() throws {
        #expect(try decoder.decode(UploadImageResponse.self, from: .json(#"{"imageUrl":"/u/1"}"#)).url == "/u/1")
        #expect(throws: DecodingError.self) {
            try decoder.decode(UploadImageResponse.self, from: .json(#"{"ok":true}"#))
        }
    }

    @Test func countriesKeepTheServersOrder() throws {
        let json =
            #"{"DE":"Deutschland","AT":"\u00d6sterreich","Z\"Q":"Quote","CH":"Schweiz","NUM":5,"BE":{"x":"y"},"AA":"Aland"}"#
        let countries = try CountriesResponse(json: .json(json))
        #expect(countries.entries.map(\.code) == ["DE", "AT", "Z\"Q", "CH", "AA"])
        #expect(countries["AT"] == "Österreich")
        #expect(countries["NUM"] == nil)
        let again = try CountriesResponse(json: countries.jsonData)
        #expect(again == countries)
    }

    @Test(arguments: ["[]", "\"DE\"", "{", "{\"a\":", ""])
    func countriesRefuseWhatIsNotAnObject(_ text: String) {
        #expect(throws: YpChatError.decoding) { try CountriesResponse(json: .json(text)) }
    }

    @Test func errorDescriptionNamesKindStatusAndMessage() {
        let error = YpChatError.status
        #expect(error.description == "YpChatError.status")
        #expect(YpChatError.unauthorized != YpChatError.status)
    }
}
