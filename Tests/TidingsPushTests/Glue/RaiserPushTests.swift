import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsPush

/// The push paths: the sandbox sends real Web Push (encrypted for alice's subscription, VAPID-signed) for a
/// mention; the router finds alice by the endpoint; wake polls, content decides from the payload; either way
/// the notification is raised once across push and poll.
@Suite(.timeLimit(.minutes(1))) struct RaiserPushTests {
    private func mentionPushed(_ fixture: GlueFixture) async throws -> IncomingWebPush {
        try await fixture.subscribe()
        await fixture.server.post(as: fixture.bob, "lunch @alice?", mentioning: [fixture.alice])
        return try #require(await fixture.receivedPushes(1).first)
    }

    private func router(_ fixture: GlueFixture) -> PushAccountRouter {
        let router = PushAccountRouter()
        router.register(GlueFixture.endpoint, to: fixture.raiser)
        return router
    }

    @Test func contentModeRaisesFromThePayloadAndThePollDoesNotRaiseAgain() async throws {
        let fixture = try await GlueFixture(configuration: NotificationRaiserConfiguration(mode: .content))
        let push = try await mentionPushed(fixture)
        #expect(push.contentEncoding == "aes128gcm")
        let (account, handling) = try await router(fixture).route(push)
        #expect(account == GlueFixture.account)
        guard case .decided(let decision) = handling else {
            Issue.record("not decided: \(handling)")
            return
        }
        #expect(decision.origin == .push)
        #expect(decision.label == "raise")
        // The server worded the pushed title; it is kept as sent.
        #expect(decision.decision.request?.title.text == "bob mentioned you")
        #expect(decision.decision.request?.body.text == "lunch @alice?")
        // The same notification through the poll: the raised set has its ID.
        #expect(try await fixture.raiser.pollAndRaise().map(\.label) == ["drop:alreadyRaised"])
        // A second delivery of the same push is dropped too.
        guard case .decided(let again) = try await fixture.raiser.handle(push) else {
            Issue.record("not decided")
            return
        }
        #expect(again.label == "drop:alreadyRaised")
    }

    @Test func contentModeShowsThePushedIconThroughTheImageCache() async throws {
        struct BobCached: NotificationImageCache {
            func cachedFilePath(for url: URL) -> String? {
                url.absoluteString == "https://sandbox.invalid/avatars/bob.png" ? "/caches/bob.png" : nil
            }
        }
        var configuration = NotificationRaiserConfiguration(mode: .content)
        configuration.content = NotificationContentContext(imageCache: BobCached())
        let fixture = try await GlueFixture(configuration: configuration)
        let push = try await mentionPushed(fixture)
        guard case .decided(let decision) = try await fixture.raiser.handle(push) else {
            Issue.record("not decided")
            return
        }
        #expect(decision.decision.request?.avatar == .cachedFile(path: "/caches/bob.png"))
        // Without the cache the payload's icon is the remote avatar.
        let uncached = try await GlueFixture(configuration: NotificationRaiserConfiguration(mode: .content))
        guard case .decided(let remote) = try await uncached.raiser.handle(try await mentionPushed(uncached)) else {
            Issue.record("not decided")
            return
        }
        #expect(remote.decision.request?.avatar == .remote(URL(string: "https://sandbox.invalid/avatars/bob.png")!))
    }

    @Test func wakeModePollsAndRaisesThereWithoutDecrypting() async throws {
        let fixture = try await GlueFixture(configuration: NotificationRaiserConfiguration(mode: .wake))
        let push = try await mentionPushed(fixture)
        #expect(try await fixture.engine.notificationGroups().isEmpty)
        let (_, handling) = try await router(fixture).route(push)
        guard case .woke(let decisions) = handling else {
            Issue.record("did not wake: \(handling)")
            return
        }
        #expect(decisions.map(\.label) == ["raise"])
        #expect(decisions.map(\.origin) == [.poll])
        #expect(decisions.first?.decision.request?.body.text == "lunch @alice?")
    }

    @Test func wakeModeWithTheAppsWakeOnlyAsksForThePoll() async throws {
        let woken = LockedState(0)
        let fixture = try await GlueFixture(
            configuration: NotificationRaiserConfiguration(mode: .wake), wake: { woken.withLock { $0 += 1 } })
        let push = try await mentionPushed(fixture)
        #expect(try await fixture.raiser.handle(push) == .wakeRequested)
        #expect(woken.withLock { $0 } == 1)
        #expect(try await fixture.engine.notificationGroups().isEmpty)
    }

    @Test func anUndecryptablePushGivesTheGenericNotificationOnAppleAndNothingOnAndroid() async throws {
        for platform in [NotificationPlatform.apple, .android] {
            var configuration = NotificationRaiserConfiguration(mode: .content)
            configuration.content = NotificationContentContext(platform: platform, accountHandle: "alice@sandbox")
            let fixture = try await GlueFixture(configuration: configuration)
            var push = try await mentionPushed(fixture)
            push.body[push.body.count - 1] ^= 0x01  // the tag no longer authenticates
            let handling = try await fixture.raiser.handle(push)
            guard case .unusable(let reason, let generic) = handling else {
                Issue.record("not refused: \(handling)")
                continue
            }
            #expect(reason.contains("authenticationFailure"))
            if platform == .apple {
                #expect(generic?.identifier == "\(GlueFixture.account)#generic")
                #expect(generic?.title.text == "New activity")
            } else {
                #expect(generic == nil)
            }
            // The poll then raises the real notification.
            #expect(try await fixture.raiser.pollAndRaise().map(\.label) == ["raise"])
        }
    }

    @Test func aPushForAnUnknownEndpointIsRefused() async throws {
        let fixture = try await GlueFixture(configuration: NotificationRaiserConfiguration(mode: .content))
        var push = try await mentionPushed(fixture)
        push.endpoint = URL(string: "https://push.invalid/push/mallory")!
        await #expect(throws: PushRoutingError.unknownEndpoint) { try await router(fixture).route(push) }
    }
}
