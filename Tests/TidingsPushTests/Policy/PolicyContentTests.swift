import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsPush

@Suite(.timeLimit(.minutes(1))) struct PolicyContentTests {
    typealias S = PolicyTestSupport

    /// An image cache holding one avatar.
    struct OneImageCache: NotificationImageCache {
        func cachedFilePath(for url: URL) -> String? {
            url.absoluteString == "https://cdn/bob.png" ? "/caches/bob.png" : nil
        }
    }

    @Test func htmlBecomesPlainTextWithEntitiesBreaksParagraphsAndLinkText() {
        let html = """
            <p>Hi <span class="h-card"><a href="https://x/@al" class="u-url mention">@<span>al</span></a></span> \
            &amp; &lt;friends&gt; &#39;quoted&#39; &#x1F600; &#xD800; &bogus; &</p><p>line<br>break<br/>again</p>\
            <p><a href="https://example.com/a/very/long/path"><span class="invisible">https://</span>\
            <span class="ellipsis">example.com/a/ver</span><span class="invisible">y/long/path</span></a></p>\
            <script>alert(1)</script><style>p{}</style>  tail\u{0A}  text
            """
        #expect(
            NotificationPlainText.fromHTML(html)
                == "Hi @al & <friends> 'quoted' 😀 \u{FFFD} &bogus; &\n\nline\nbreak\nagain\n\nexample.com/a/ver…\n\ntail text"
        )
        #expect(NotificationPlainText.fromHTML("a < b and c<3 <unclosed") == "a < b and c<3 <unclosed")
        #expect(NotificationPlainText.fromHTML("") == "")
        #expect(NotificationPlainText.fromHTML("<p></p><br><p> </p>") == "")
    }

    @Test func textIsTruncatedToTheDocumentedLengthAtAWordBoundary() {
        let words = String(repeating: "word ", count: 100)
        let cut = NotificationPlainText.truncated(words)
        #expect(cut.count <= NotificationPlainText.maximumLength && cut.hasSuffix("word…"))
        let solid = String(repeating: "ü", count: 500)
        #expect(NotificationPlainText.truncated(solid).count == NotificationPlainText.maximumLength)
        let emoji = String(repeating: "👩‍👩‍👧", count: 300)
        #expect(NotificationPlainText.truncated(emoji).count == NotificationPlainText.maximumLength)
        #expect(NotificationPlainText.truncated("short") == "short")
    }

    @Test func randomMarkupNeverTrapsAndGivesTrimmedText() {
        var random = SplitMix64(seed: 0x5EED_0012)
        let pieces = [
            "<", ">", "&", ";", "#", "x", "/", "p", "br", "span", "class=\"invisible\"", "ellipsis", "script", "</",
            "&#", "&#x", "FFFF", "1114112", "0", " ", "\n", "a", "é", "👩‍👧", "&amp;", "<a href='", "'>", "\u{0}",
        ]
        for _ in 0..<3000 {
            let count = Int(random.next() % 40)
            let input = (0..<count).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }.joined()
            let text = NotificationPlainText.fromHTML(input)
            #expect(text == text.trimmingCharacters(in: .whitespacesAndNewlines))
            #expect(!text.contains("\n\n\n"))
            #expect(NotificationPlainText.truncated(text, to: 10).count <= 10)
        }
    }

    @Test func aPushedIconIsTheRemoteAvatarOrTheCachedFileWhenTheImageCacheHasIt() throws {
        func request(icon: String, cache: (any NotificationImageCache)?) throws -> NotificationRequest {
            let payload = try JSONValue(
                parsing:
                    #"{"notification_id": "9", "notification_type": "mention", "title": "t", "body": "b", "icon": "\#(icon)"}"#
            )
            let candidate = try #require(NotificationCandidate(pushPayload: payload, account: S.account))
            return NotificationContentBuilder.request(for: candidate, context: .init(imageCache: cache))
        }
        let bob = try #require(URL(string: "https://cdn/bob.png"))
        #expect(try request(icon: bob.absoluteString, cache: nil).avatar == .remote(bob))
        #expect(
            try request(icon: bob.absoluteString, cache: OneImageCache()).avatar == .cachedFile(path: "/caches/bob.png")
        )
        // Not in the cache: the remote URL.
        let carol = try #require(URL(string: "https://cdn/carol.png"))
        #expect(try request(icon: carol.absoluteString, cache: OneImageCache()).avatar == .remote(carol))
        #expect(try request(icon: "", cache: OneImageCache()).avatar == nil)
    }

    @Test func aMentionIsWordedLaidOutAndActionableByPlatform() {
        let candidate = S.candidate("1", .mention, html: "<p>Are you <b>coming</b>?</p>")
        let context = NotificationContentContext(
            language: .german, platform: .android, accountHandle: "alice@example.social", signedInAccounts: 2,
            imageCache: OneImageCache())
        let request = NotificationContentBuilder.request(for: candidate, context: context)
        #expect(
            request.title.text == "Bob hat dich erwähnt" && request.title.localized(.english) == "Bob mentioned you")
        #expect(request.body.text == "Are you coming?")
        #expect(request.subtitle == "alice@example.social")
        #expect(request.threadIdentifier == "alice@example.social#conversation:900")
        #expect(request.interruptionLevel == .active)
        #expect(request.actions == [.reply, .favourite, .muteConversation])
        #expect(request.channel.id == "alice@example.social.mentions" && request.channel.groupID == S.account)
        #expect(request.avatar == .cachedFile(path: "/caches/bob.png"))
        #expect(request.shortcutKey == "alice@example.social#author:42")
        #expect(request.identifier == "alice@example.social#notification:1")

        let apple = NotificationContentBuilder.request(for: candidate, context: .init(accountHandle: S.account))
        #expect(apple.actions == [.reply, .favourite, .boost, .open])
        #expect(apple.subtitle == nil)
        #expect(apple.avatar == .remote(URL(string: "https://cdn/bob.png")!))
        let locked = NotificationContentBuilder.request(for: candidate, context: .init(appLocked: true))
        #expect(locked.actions.isEmpty)
        let direct = NotificationContentBuilder.request(
            for: S.candidate("2", visibility: .direct), context: .init())
        #expect(direct.title.text == "Bob sent you a private mention" && !direct.actions.contains(.boost))
    }

    @Test func everyKindHasALevelAChannelAndAtMostThreeAndroidActions() {
        for category in NotificationCategory.allCases {
            for platform in [NotificationPlatform.apple, .android] {
                let actions = NotificationKindTable.actions(category, platform: platform)
                #expect(platform == .apple || actions.count <= 3)
                #expect(NotificationKindTable.actions(category, platform: platform, appLocked: true).isEmpty)
            }
            let request = NotificationContentBuilder.request(for: S.candidate("1", category), context: .init())
            #expect(!request.title.text.contains("%"), "unworded title for \(category)")
            #expect(!request.title.localized(.german).contains("title."), "no German title for \(category)")
        }
        #expect(NotificationKindTable.actions(.status, platform: .android) == [.reply, .favourite, .boost])
        #expect(NotificationKindTable.actions(.status, platform: .apple) == [.reply, .favourite, .boost, .open])
        for passive in [NotificationCategory.favourite, .reblog, .follow] {
            #expect(NotificationKindTable.interruptionLevel(passive) == .passive)
        }
        #expect(NotificationKindTable.channelKind(.reblog) == .boosts)
        #expect(NotificationKindTable.channelKind(.update) == .edits)
        #expect(NotificationKindTable.channelKind(.severedRelationships) == .moderation)
        let follow = NotificationContentBuilder.request(for: S.candidate("1", .follow), context: .init())
        #expect(follow.shortcutKey == nil && follow.threadIdentifier.hasPrefix(S.account))
    }

    @Test func aContentWarningIsShownInsteadOfTheText() {
        var candidate = S.candidate("1", html: "<p>spoiler!</p>")
        candidate.spoilerText = "film ending"
        let request = NotificationContentBuilder.request(for: candidate, context: .init(language: .german))
        #expect(request.body.text == "Inhaltswarnung: film ending")
    }

    @Test func theGenericNotificationIsForAppleOnlyAndTheDigestSummarises() {
        let context = NotificationContentContext(language: .german, accountHandle: "@alice@example.social")
        let generic = NotificationContentBuilder.generic(account: S.account, context: context)
        #expect(generic?.title.text == "Neue Aktivität" && generic?.body.text == "@alice@example.social")
        #expect(generic?.title.localized(.english) == "New activity")
        var android = context
        android.platform = .android
        #expect(NotificationContentBuilder.generic(account: S.account, context: android) == nil)

        var carol = S.candidate("3", .follow)
        carol.author?.displayName = "Carol"
        var dave = S.candidate("4", .reblog, group: "g", count: 3)
        dave.author?.displayName = "Dave"
        var erin = S.candidate("5", .poll)
        erin.author?.displayName = "Erin"
        let summary = NotificationContentBuilder.digest(
            account: S.account, candidates: [S.candidate("1"), carol, dave, erin], context: .init())
        #expect(summary?.title.text == "6 new notifications")
        #expect(summary?.body.text == "From Bob, Carol and 2 others")
        #expect(summary?.body.localized(.german) == "Von Bob, Carol und 2 weiteren")
        #expect(summary?.channel.kind == .digest)
        #expect(NotificationContentBuilder.digest(account: S.account, candidates: [], context: .init()) == nil)
    }
}
