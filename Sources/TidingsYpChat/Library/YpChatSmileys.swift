/// The smiley bar of the chat screen: the token a tap inserts into the text, and the picture shown
/// for it. The Android app's `SmileyItems` is not public; these are the usual text smileys.
public struct YpChatSmiley: Sendable, Equatable, Hashable {
    /// What is inserted into the message text (and sent as it is).
    public let token: String
    /// The emoji a screen may draw for it.
    public let emoji: String

    /// The bar, in order.
    public static let all: [YpChatSmiley] = [
        YpChatSmiley(token: ":)", emoji: "🙂"), YpChatSmiley(token: ":D", emoji: "😄"),
        YpChatSmiley(token: ";)", emoji: "😉"), YpChatSmiley(token: ":(", emoji: "🙁"),
        YpChatSmiley(token: ":P", emoji: "😛"), YpChatSmiley(token: ":O", emoji: "😮"),
        YpChatSmiley(token: ":*", emoji: "😘"), YpChatSmiley(token: "<3", emoji: "❤️"),
        YpChatSmiley(token: "xD", emoji: "😆"), YpChatSmiley(token: ":'(", emoji: "😢"),
    ]

    /// `text` with `smiley`'s token appended, separated by a space when the text does not end in one.
    public static func insert(_ smiley: YpChatSmiley, into text: String) -> String {
        text.isEmpty || text.hasSuffix(" ") ? text + smiley.token : text + " " + smiley.token
    }
}
