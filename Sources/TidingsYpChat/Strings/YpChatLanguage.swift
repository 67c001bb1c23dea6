import Foundation

/// The languages of the string catalogue.
public enum YpChatLanguage: String, Sendable, CaseIterable {
    /// Deutsch (the plan's minimum).
    case german = "de"
    /// English.
    case english = "en"

    /// German for a locale whose language is German, English otherwise.
    public init(locale: Locale) {
        self = locale.language.languageCode?.identifier == "de" ? .german : .english
    }

    /// German when the `LANG`-style identifier (e.g. `de_DE.UTF-8`) starts with `de`, English otherwise.
    public init(identifier: String) {
        self = identifier.lowercased().hasPrefix("de") ? .german : .english
    }
}
