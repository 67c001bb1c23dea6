/// `NotificationStrings` holds the engine's wording of notifications in every ``NotificationLanguage``: one
/// template per key, with `%1`, `%2`… for its arguments. Apps may use the keys with catalogs of their own.
public enum NotificationStrings {
    /// The templates, by key and language.
    public static let templates: [String: [NotificationLanguage: String]] = [
        "title.mention": [.english: "%1 mentioned you", .german: "%1 hat dich erwähnt"],
        "title.mention.private": [.english: "%1 sent you a private mention", .german: "%1 hat dich privat erwähnt"],
        "title.reply": [.english: "%1 replied to you", .german: "%1 hat dir geantwortet"],
        "title.favourite": [.english: "%1 favourited your post", .german: "%1 hat deinen Beitrag favorisiert"],
        "title.favourite.group": [
            .english: "%1 and %2 others favourited your post",
            .german: "%1 und %2 weitere haben deinen Beitrag favorisiert",
        ],
        "title.reblog": [.english: "%1 boosted your post", .german: "%1 hat deinen Beitrag geteilt"],
        "title.reblog.group": [
            .english: "%1 and %2 others boosted your post", .german: "%1 und %2 weitere haben deinen Beitrag geteilt",
        ],
        "title.follow": [.english: "%1 followed you", .german: "%1 folgt dir jetzt"],
        "title.follow.group": [
            .english: "%1 and %2 others followed you", .german: "%1 und %2 weitere folgen dir jetzt",
        ],
        "title.follow_request": [.english: "%1 requested to follow you", .german: "%1 möchte dir folgen"],
        "title.poll": [.english: "A poll has ended", .german: "Eine Umfrage ist beendet"],
        "title.status": [.english: "%1 posted", .german: "%1 hat einen Beitrag veröffentlicht"],
        "title.update": [.english: "%1 edited a post", .german: "%1 hat einen Beitrag bearbeitet"],
        "title.moderation_warning": [
            .english: "You received a moderation warning", .german: "Du hast eine Moderationswarnung erhalten",
        ],
        "title.severed_relationships": [
            .english: "Some of your follow relationships were severed",
            .german: "Einige deiner Folgebeziehungen wurden getrennt",
        ],
        "title.digest.one": [.english: "1 new notification", .german: "1 neue Benachrichtigung"],
        "title.digest.other": [.english: "%1 new notifications", .german: "%1 neue Benachrichtigungen"],
        "body.digest": [.english: "From %1", .german: "Von %1"],
        "body.digest.more": [.english: "From %1 and %2 others", .german: "Von %1 und %2 weiteren"],
        "title.generic": [.english: "New activity", .german: "Neue Aktivität"],
        "body.generic": [.english: "%1", .german: "%1"],
        "title.nextcloud.other_app": [
            .english: "New notification in %1", .german: "Neue Benachrichtigung in %1",
        ],
        "body.text": [.english: "%1", .german: "%1"],
        "body.content_warning": [.english: "Content warning: %1", .german: "Inhaltswarnung: %1"],
    ]

    /// The text of `key` in `language` with `arguments` put in; the key itself when unknown.
    public static func format(_ key: String, _ arguments: [String], _ language: NotificationLanguage) -> String {
        guard let template = templates[key]?[language] ?? templates[key]?[.english] else { return key }
        // Highest index first, so `%1` never eats the start of `%10`.
        var text = template
        for (offset, argument) in arguments.enumerated().reversed() {
            text = text.replacingOccurrences(of: "%\(offset + 1)", with: argument)
        }
        return text
    }

    /// A ``NotificationText`` for `key` worded in `language`.
    public static func text(_ key: String, _ arguments: [String], _ language: NotificationLanguage)
        -> NotificationText
    {
        NotificationText(key: key, arguments: arguments, text: format(key, arguments, language))
    }
}
