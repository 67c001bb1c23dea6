import Foundation
import Testing
import TidingsYpChat

/// The string catalogue, the profile store and the library's data (genders, ages, tabs, smileys).
@Suite(.timeLimit(.minutes(1))) struct YpChatLibraryDataTests {
    @Test func everyKeyHasATextInGermanAndEnglishWithTheSamePlaceholders() {
        for language in YpChatLanguage.allCases {
            let table = YpChatStrings.table(language)
            let missing = YpChatStringKey.allCases.filter { (table[$0] ?? "").isEmpty }
            #expect(missing.isEmpty, "\(language) lacks \(missing)")
        }
        let placeholders = { (text: String) in
            Set((0..<4).filter { text.contains("{\($0)}") })
        }
        for key in YpChatStringKey.allCases {
            #expect(
                placeholders(YpChatStrings.text(key, language: .german))
                    == placeholders(YpChatStrings.text(key, language: .english)), "\(key)")
        }
        #expect(YpChatStrings.text(.errorServer, language: .german, arguments: ["502"]) == "Serverfehler (502).")
        #expect(YpChatNotice.key(.tabInbox).text(in: .german) == "Posteingang")
        #expect(YpChatNotice.server("kaputt").text(in: .english) == "kaputt")
        #expect(YpChatLanguage(identifier: "de_AT.UTF-8") == .german)
        #expect(YpChatLanguage(identifier: "C") == .english)
    }

    @Test func everyMessageTheStateCanShowIsInTheCatalogue() {
        let errors: [any Error] = [
            YpChatError.imageTooLarge, YpChatError.timedOut, YpChatError.unauthorized, YpChatError.status,
            YpChatError.decoding, YpChatError.transport, CancellationError(),
        ]
        for error in errors {
            guard case .localized(let key, _) = YpChatNotice(error: error) else {
                Issue.record("\(error) has no catalogue message")
                continue
            }
            #expect(YpChatStringKey.allCases.contains(key))
        }
        for language in YpChatLanguage.allCases {
            #expect(!YpChatNotice(error: YpChatError.status).text(in: language).contains("{0}"))
        }
    }

    @Test func theProfileStoreKeepsOneFileReadableOnlyByItsOwner() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ypchat-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("profile.json")
        let store = YpChatProfileStore(url: url)
        #expect(await store.load() == nil)
        let profile = ChatProfile(userName: "anna", gender: "w", age: 30, country: "DE")
        try await store.save(profile)
        try await store.save(ChatProfile(userName: "anna2", gender: "w", age: 31, country: "AT"))
        #expect(await YpChatProfileStore(url: url).load()?.userName == "anna2")
        let mode = try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["profile.json"])
        try Data("{not json".utf8).write(to: url)
        #expect(await store.load() == nil)
        await store.clear()
        #expect(!FileManager.default.fileExists(atPath: url.path))
    }

    @Test func gendersAgesTabsAndSmileys() {
        #expect(YpChatGender.allCases.map(\.code) == ["m", "w", "d"])
        #expect(YpChatGender(code: "x") == nil)
        #expect(ChatProfile.ageRange == 18...99)
        #expect(YpChatSearchQuery().minAge == ChatProfile.ageRange.lowerBound)
        #expect(YpChatTab.allCases == [.online, .search, .inbox, .history, .console, .more])
        #expect(
            YpChatTab.allCases.map { YpChatStrings.text($0.titleKey, language: .german) } == [
                "Online", "Suche", "Posteingang", "Verlauf", "Konsole", "Mehr",
            ])
        #expect(Set(YpChatSmiley.all.map(\.token)).count == YpChatSmiley.all.count)
        #expect(YpChatSmiley.insert(YpChatSmiley.all[0], into: "hi") == "hi :)")
        #expect(YpChatSmiley.insert(YpChatSmiley.all[0], into: "") == ":)")
    }
}
