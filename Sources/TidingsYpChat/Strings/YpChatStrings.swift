import Foundation

/// The German and English string catalogue, looked up by ``YpChatStringKey``.
///
/// Guarantees: every key has a text in every ``YpChatLanguage`` (a test checks it); a placeholder
/// `{n}` is replaced by the n-th argument, and one without an argument stays as it is.
public enum YpChatStrings {
    /// The text of `key` in `language`, its `{0}`, `{1}`... replaced by `arguments`.
    public static func text(_ key: YpChatStringKey, language: YpChatLanguage, arguments: [String] = []) -> String {
        var text = table(language)[key] ?? key.rawValue
        for (index, argument) in arguments.enumerated() {
            text = text.replacingOccurrences(of: "{\(index)}", with: argument)
        }
        return text
    }

    /// Every text of `language`, by key.
    public static func table(_ language: YpChatLanguage) -> [YpChatStringKey: String] {
        switch language {
        case .german: german
        case .english: english
        }
    }
}
