import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsPush
import TidingsSandbox
import TidingsSandboxKit

/// A Nextcloud Social push goes through the app's poll scheduler: it asks for the account's notifications poll
/// (joining one in flight) and the raiser decides, so nothing is polled twice and what is raised is decided in one
/// place.
@Suite(.timeLimit(.minutes(1))) struct NextcloudSchedulerPushTests {
    struct Setup {
        let fixture: GlueFixture
        let scheduler: MastodonPollScheduler
        let handler: NextcloudPushHandler

        init() async throws {
            fixture = try await GlueFixture(variant: .nextcloud)
            // Manual: the scheduler never ticks on its own, so every request here is the push's.
            scheduler = MastodonPollScheduler(
                clock: fixture.clock, settings: MastodonPollSettings(preset: .manual))
            await scheduler.addAccount(MastodonPollAccount(key: GlueFixture.account, target: fixture.engine))
            let keys = try #require(NextcloudPushHandlerTests.keys)
            let schema = SQLiteSchema(
                tables: [NextcloudRaisedNotifications.table],
                migrations: [.init(version: 1, name: "map") { try NextcloudRaisedNotifications.createTable($0) }])
            handler = NextcloudPushHandler(
                raiser: fixture.raiser,
                decryptor: NextcloudProxyPushDecryptor(deviceKey: keys.device, userPublicKey: keys.user.publicKey),
                raised: NextcloudRaisedNotifications(database: try SQLiteDatabase.inMemory(schema: schema)),
                scheduler: scheduler)
        }

        var notificationPolls: Int {
            fixture.http.log.entries.filter { $0.method == "GET" && $0.path == "/api/v1/notifications" }.count
        }

        func push(nid: Int64) async throws -> NextcloudPushHandling {
            try await handler.handle(
                messageJSON: try NextcloudPushHandlerTests.push(NextcloudPushHandlerTests.social(nid: nid)))
        }
    }

    @Test func aSocialPushAsksTheSchedulerAndTheRaiserDecidesOnce() async throws {
        let setup = try await Setup()
        defer { Task { await setup.scheduler.shutdown() } }
        // The raiser also follows every poll of the engine (as an app with a scheduler sets it up): whichever of it
        // and the push's handler decides first, the notification is raised once and mapped to the nid.
        await setup.fixture.raiser.startFollowingPolls()
        let events = setup.fixture.raiser.events()
        await setup.fixture.server.post(
            as: setup.fixture.bob, "@alice lunch?", mentioning: [setup.fixture.alice])
        guard case .polled(7, let decisions) = try await setup.push(nid: 7) else {
            Issue.record("the Social push was not polled")
            return
        }
        // One poll: its page, then the page above the newest, where the server links no newer one (the top).
        #expect(setup.notificationPolls == 2, "the scheduler's poll, and only it")
        #expect(decisions.count == 1)

        // One raise for the mention, whichever path decided it.
        await setup.fixture.raiser.withdrawRaised(["fence"])
        var raised: [String] = []
        for await event in events {
            if event == .withdrawRaised(["fence"]) { break }
            if case .decided(let record) = event, let request = record.decision.request {
                raised.append(request.identifier)
            }
        }
        #expect(raised.count == 1)
        let identifier = try #require(raised.first)

        // The nid was mapped to it: the delete withdraws exactly that notification.
        let delete = try NextcloudPushHandlerTests.push(#"{"delete":true,"nid":7}"#)
        let withdrawn = try await setup.handler.handle(messageJSON: delete)
        #expect(withdrawn == .withdrew(raisedIdentifiers: [identifier]), "decisions: \(decisions)")
    }

    @Test func aPushDuringAPollInFlightJoinsIt() async throws {
        let setup = try await Setup()
        defer { Task { await setup.scheduler.shutdown() } }
        await setup.fixture.server.post(as: setup.fixture.bob, "@alice one", mentioning: [setup.fixture.alice])
        // The server takes a minute of the virtual clock to answer the first notifications poll.
        setup.fixture.http.faults.add(.delay(.seconds(60)), on: .path("/api/v1/notifications", method: "GET"), times: 1)
        let first = Task { try await setup.push(nid: 1) }
        #expect(await setup.fixture.clock.waitForSleepers(1), "the first poll is in flight")
        let second = Task { try await setup.push(nid: 2) }
        var joined = false
        for _ in 0..<100_000 where !joined {
            joined = await setup.scheduler.notificationPollCallers(account: GlueFixture.account) == 2
            await Task.yield()
        }
        #expect(joined, "the second push joined the poll in flight")
        await setup.fixture.clock.advance(by: .seconds(60))
        let results = [try await first.value, try await second.value]
        #expect(setup.notificationPolls == 2, "one poll for both pushes (its page and the empty one above it)")
        let raisedAll = results.flatMap { result -> [String] in
            guard case .polled(_, let decisions) = result else { return [] }
            return decisions.compactMap(\.decision.request?.identifier)
        }
        #expect(raisedAll.count == 1, "the mention is raised once: \(raisedAll)")
    }
}
