import Foundation

/// What the person enters to log in, and what the profile store keeps for next time.
///
/// Guarantees: ``validationError`` is the one rule the login screen, the reducer and the repository
/// share, so a profile the screen accepts is never refused later for another reason by the client.
public struct ChatProfile: Sendable, Equatable, Hashable, Codable {
    /// The nickname (at least ``minimumUserNameLength`` characters after trimming spaces).
    public var userName: String
    /// The gender code, one of the codes of ``YpChatGender``.
    public var gender: String
    /// The age, within ``ChatProfile/ageRange``.
    public var age: Int
    /// The country code, as `api/countries` lists it.
    public var country: String

    /// The fewest characters of a nickname (the Android app's rule).
    public static let minimumUserNameLength = 3
    /// The ages the app accepts and the search offers.
    public static let ageRange = 18...99

    /// A profile.
    public init(userName: String, gender: String, age: Int, country: String) {
        self.userName = userName
        self.gender = gender
        self.age = age
        self.country = country
    }

    /// The nickname without leading and trailing white space (what is sent).
    public var trimmedUserName: String { userName.trimmingCharacters(in: .whitespacesAndNewlines) }

    /// Why this profile cannot log in, as the string key of the message to show; nil when it can.
    public var validationError: YpChatStringKey? {
        if trimmedUserName.count < Self.minimumUserNameLength { return .errorNicknameTooShort }
        if YpChatGender(code: gender) == nil { return .errorGenderMissing }
        if !Self.ageRange.contains(age) { return .errorAgeOutOfRange }
        if country.isEmpty { return .errorCountryMissing }
        return nil
    }
}
