import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsPush

/// A Social push names no Mastodon notification, so its `nid` is matched to what its poll found: when one poll
/// covers several pushes (a tick's poll raised them before the pushes arrived, or the pushes' polls coalesced),
/// each `nid` is matched to its own notification, in order, whatever order the pushes are handled in; so the
/// server's `delete` of one (read on the web) never takes down another, still unread.
@Suite(.timeLimit(.minutes(1))) struct NextcloudNidMappingTests {
    typealias Setup = NextcloudPushHandlerTests.Setup

    static func push(_ json: String) throws -> [UInt8] { try NextcloudPushHandlerTests.push(json) }

    /// Two mentions raised by one poll of the raiser (a tick) before any push; their identifiers, oldest first.
    static func twoMentionsRaisedByATick(_ setup: Setup) async throws -> (first: String, second: String) {
        await setup.fixture.server.post(as: setup.fixture.bob, "one @alice", mentioning: [setup.fixture.alice])
        await setup.fixture.server.post(as: setup.fixture.bob, "two @alice", mentioning: [setup.fixture.alice])
        let raised = try await setup.fixture.raiser.pollAndRaise().compactMap(\.decision.request)
        #expect(raised.map(\.body.text) == ["one @alice", "two @alice"])
        return (try #require(raised.first?.identifier), try #require(raised.last?.identifier))
    }

    @Test(arguments: [[Int64(1), 2], [2, 1]])
    func pushesAfterATickRaisedTheirNotificationsAreEachMatchedToTheirOwn(order: [Int64]) async throws {
        let setup = try await Setup()
        let (first, second) = try await Self.twoMentionsRaisedByATick(setup)
        for nid in order {
            _ = try await setup.handler.handle(messageJSON: try Self.push(NextcloudPushHandlerTests.social(nid: nid)))
        }
        // The first mention was read on the web: its delete takes down the first notification, not the second.
        let deleted = try await setup.handler.handle(messageJSON: try Self.push(#"{"delete":true,"nid":1}"#))
        #expect(deleted == .withdrew(raisedIdentifiers: [first]))
        let other = try await setup.handler.handle(messageJSON: try Self.push(#"{"delete":true,"nid":2}"#))
        #expect(other == .withdrew(raisedIdentifiers: [second]))
    }

    @Test func aNotificationTwoNidsShareIsWithdrawnWhenBothAreDeleted() async throws {
        let setup = try await Setup()
        await setup.fixture.server.post(as: setup.fixture.bob, "one @alice", mentioning: [setup.fixture.alice])
        let raised = try await setup.fixture.raiser.pollAndRaise().compactMap(\.decision.request?.identifier)
        let only = try #require(raised.first)
        // Two pushes, one notification found: both nids share it, and it stays up while either is not deleted.
        for nid: Int64 in [1, 2] {
            _ = try await setup.handler.handle(messageJSON: try Self.push(NextcloudPushHandlerTests.social(nid: nid)))
        }
        let first = try await setup.handler.handle(messageJSON: try Self.push(#"{"delete":true,"nid":2}"#))
        #expect(first == .withdrew(raisedIdentifiers: []))
        let second = try await setup.handler.handle(messageJSON: try Self.push(#"{"delete":true,"nid":1}"#))
        #expect(second == .withdrew(raisedIdentifiers: [only]))
    }

    @Test func aNotificationRaisedLongBeforeThePushIsNotWhatItAnnounces() async throws {
        let setup = try await Setup()
        await setup.fixture.server.post(as: setup.fixture.bob, "old @alice", mentioning: [setup.fixture.alice])
        let old = try await setup.fixture.raiser.pollAndRaise().compactMap(\.decision.request?.identifier)
        #expect(old.count == 1, "raised an hour ago, never read nor pushed")
        await setup.fixture.clock.advance(by: .seconds(3600))
        let identifier = try await setup.mention("new @alice", nid: 4)
        let deleted = try await setup.handler.handle(messageJSON: try Self.push(#"{"delete":true,"nid":4}"#))
        #expect(deleted == .withdrew(raisedIdentifiers: [identifier]))
        // A delete-all takes each notification down once, however many nids named it.
        _ = try await setup.handler.handle(messageJSON: try Self.push(NextcloudPushHandlerTests.social(nid: 5)))
        _ = try await setup.handler.handle(messageJSON: try Self.push(NextcloudPushHandlerTests.social(nid: 6)))
        let all = try await setup.handler.handle(messageJSON: try Self.push(#"{"delete-all":true}"#))
        guard case .withdrew(let identifiers) = all else {
            Issue.record("unexpected \(all)")
            return
        }
        #expect(identifiers.count == Set(identifiers).count, "no identifier twice: \(identifiers)")
    }

    @Test func aSocialPushHeldByQuietHoursIsWithdrawnByItsDeleteOnceRaised() async throws {
        let setup = try await Setup(
            configuration: NotificationRaiserConfiguration(
                settings: NotificationSettings(quietHours: RaiserTimeTests.night)))
        await setup.fixture.server.post(as: setup.fixture.bob, "late @alice", mentioning: [setup.fixture.alice])
        let pushed = try await setup.handler.handle(
            messageJSON: try Self.push(NextcloudPushHandlerTests.social(nid: 3)))
        guard case .polled(3, let decisions) = pushed else {
            Issue.record("unexpected \(pushed)")
            return
        }
        #expect(decisions.map(\.label) == ["hold:quietHours"])
        // 07:00: the job at the end of quiet hours raises it; the server's delete then takes it down.
        await setup.fixture.clock.advance(by: .seconds(8 * 3600))
        let released = try await setup.fixture.raiser.releaseHeld().decisions
        let identifier = try #require(released.first?.decision.request?.identifier)
        // A new mention's push minutes later is matched to the new one, not to the one just released.
        await setup.fixture.clock.advance(by: .seconds(120))
        let morning = try await setup.mention("morning @alice", nid: 4)
        let deletedMorning = try await setup.handler.handle(messageJSON: try Self.push(#"{"delete":true,"nid":4}"#))
        #expect(deletedMorning == .withdrew(raisedIdentifiers: [morning]))
        let deleted = try await setup.handler.handle(messageJSON: try Self.push(#"{"delete":true,"nid":3}"#))
        #expect(deleted == .withdrew(raisedIdentifiers: [identifier]))
    }

    @Test func aSocialNotificationDeletedWhileHeldIsNeverRaised() async throws {
        let setup = try await Setup(
            configuration: NotificationRaiserConfiguration(
                settings: NotificationSettings(quietHours: RaiserTimeTests.night)))
        await setup.fixture.server.post(as: setup.fixture.bob, "late @alice", mentioning: [setup.fixture.alice])
        _ = try await setup.handler.handle(messageJSON: try Self.push(NextcloudPushHandlerTests.social(nid: 3)))
        // Read (dismissed) on the server during the night: nothing is shown yet, so nothing is withdrawn…
        let deleted = try await setup.handler.handle(messageJSON: try Self.push(#"{"delete":true,"nid":3}"#))
        #expect(deleted == .withdrew(raisedIdentifiers: []))
        // …and the job at the end of quiet hours does not raise it.
        await setup.fixture.clock.advance(by: .seconds(8 * 3600))
        let released = try await setup.fixture.raiser.releaseHeld().decisions
        #expect(released.map(\.label) == ["drop:alreadyRaised"])
        #expect(try await setup.fixture.raiser.signOut().withdrawal.withdrawRequestIdentifiers.isEmpty)
    }
}
