/// The gender options of the login and the search, with the codes the server uses.
public enum YpChatGender: String, Sendable, CaseIterable, Hashable {
    /// `m`.
    case male = "m"
    /// `w` (weiblich).
    case female = "w"
    /// `d` (divers).
    case diverse = "d"

    /// The option with `code`; nil for an unknown code.
    public init?(code: String) { self.init(rawValue: code) }

    /// The code sent in `login` and `userSearch`.
    public var code: String { rawValue }

    /// The label's key in the string catalogue.
    public var labelKey: YpChatStringKey {
        switch self {
        case .male: .genderMale
        case .female: .genderFemale
        case .diverse: .genderDiverse
        }
    }
}
