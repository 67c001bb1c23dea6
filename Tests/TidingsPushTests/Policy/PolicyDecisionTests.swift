import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsPush

@Suite(.timeLimit(.minutes(1))) struct PolicyDecisionTests {
    typealias S = PolicyTestSupport
    let noon = S.date(2026, 6, 10, 12)

    @Test func aSwitchedOffCategoryIsDroppedAndOthersRaise() {
        var settings = NotificationSettings()
        settings.enabledCategories.remove(.favourite)
        let context = S.context(noon)
        #expect(
            NotificationPolicy.decide(S.candidate("1", .favourite), settings: settings, context: context, raised: .none)
                .label == "drop.categoryOff")
        #expect(
            NotificationPolicy.decide(S.candidate("1", .mention), settings: settings, context: context, raised: .none)
                .label == "raise")
    }

    @Test func theMarkerCoversIDsInServerIDOrderNotStringOrder() {
        // "99" sorts after "100" as a string; as a ServerID it is older, so the marker "100" covers it.
        let context = S.context(noon, marker: "100")
        let settings = NotificationSettings()
        #expect(
            NotificationPolicy.decide(S.candidate("99"), settings: settings, context: context, raised: .none).label
                == "drop.coveredByMarker")
        #expect(
            NotificationPolicy.decide(S.candidate("100"), settings: settings, context: context, raised: .none).label
                == "drop.coveredByMarker")
        #expect(
            NotificationPolicy.decide(S.candidate("101"), settings: settings, context: context, raised: .none).label
                == "raise")
    }

    @Test func oneNotificationIsRaisedOnceAcrossPushPollAndStream() async throws {
        let store = try S.store()
        let context = S.context(noon)
        var labels: [String] = []
        for origin in [NotificationOrigin.push, .poll, .stream, .poll] {
            let decision = try await store.decideAndRecord(
                S.candidate("500", origin: origin), settings: NotificationSettings(), context: context)
            labels.append(decision.label)
        }
        #expect(labels == ["raise", "drop.alreadyRaised", "drop.alreadyRaised", "drop.alreadyRaised"])
        // Another account's notification with the same ID is its own.
        var other = S.candidate("500")
        other.account = "carol@example.social"
        #expect(
            try await store.decideAndRecord(other, settings: NotificationSettings(), context: context).label == "raise")
    }

    @Test func theRaisedSetSurvivesReopeningTheFile() async throws {
        let directory = try S.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        do {
            let database = try await SQLiteDatabase.open(path: path, schema: NotificationPolicyStore.schema)
            let decision = try await NotificationPolicyStore(database: database).decideAndRecord(
                S.candidate("7"), settings: NotificationSettings(), context: S.context(noon))
            #expect(decision.label == "raise")
            database.close()
        }
        let database = try await SQLiteDatabase.open(path: path, schema: NotificationPolicyStore.schema)
        let again = try await NotificationPolicyStore(database: database).decideAndRecord(
            S.candidate("7", origin: .stream), settings: NotificationSettings(), context: S.context(noon))
        #expect(again.label == "drop.alreadyRaised")
    }

    @Test func twoConnectionsOnOneFileRaiseEachNotificationOnce() async throws {
        // The app and its notification extension: two connections to one file, deciding at the same time.
        let directory = try S.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        let app = NotificationPolicyStore(
            database: try await SQLiteDatabase.open(path: path, schema: NotificationPolicyStore.schema))
        let extensionStore = NotificationPolicyStore(
            database: try await SQLiteDatabase.open(path: path, schema: NotificationPolicyStore.schema))
        let context = S.context(noon)
        let raises = try await withThrowingTaskGroup(of: Int.self) { group in
            for id in 1...20 {
                for (store, origin) in [(app, NotificationOrigin.poll), (extensionStore, .push)] {
                    group.addTask {
                        let decision = try await store.decideAndRecord(
                            S.candidate(ServerID(String(id)), origin: origin), settings: NotificationSettings(),
                            context: context)
                        return decision.label == "raise" ? 1 : 0
                    }
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(raises == 20)
    }

    @Test func aGroupRaisesOnceThenUpdatesInPlaceWithTheSameIdentifierAsItGrows() async throws {
        let store = try S.store()
        let context = S.context(noon)
        let settings = NotificationSettings()
        let first = try await store.decideAndRecord(
            S.candidate("10", .favourite, group: "fav-900", count: 1), settings: settings, context: context)
        let grown = try await store.decideAndRecord(
            S.candidate("12", .favourite, group: "fav-900", count: 3), settings: settings, context: context)
        let same = try await store.decideAndRecord(
            S.candidate("12", .favourite, origin: .stream, group: "fav-900", count: 3), settings: settings,
            context: context)
        #expect(first.label == "raise" && grown.label == "update" && same.label == "drop.alreadyRaised")
        #expect(first.request?.identifier == grown.request?.identifier)
        #expect(grown.request?.title.text == "Bob and 2 others favourited your post")
        // An older view of the group (a stale page) changes nothing.
        let stale = try await store.decideAndRecord(
            S.candidate("11", .favourite, group: "fav-900", count: 2), settings: settings, context: context)
        #expect(stale.label == "drop.alreadyRaised")
    }

    @Test func aGroupUpdateReplacesWhatIsShownEvenInQuietHours() async throws {
        let store = try S.store()
        var settings = NotificationSettings()
        settings.quietHours = QuietHours(start: (22, 0), end: (7, 0))
        _ = try await store.decideAndRecord(
            S.candidate("10", .reblog, group: "boost-1"), settings: settings, context: S.context(noon))
        let night = try await store.decideAndRecord(
            S.candidate("11", .reblog, group: "boost-1", count: 2), settings: settings,
            context: S.context(S.date(2026, 6, 10, 23)))
        #expect(night.label == "update")
    }

    @Test func aPushRaisedAloneIsGrownInPlaceWhenItsGroupIsPolled() async throws {
        let store = try S.store()
        let settings = NotificationSettings()
        let pushed = try await store.decideAndRecord(
            S.candidate("20", .favourite, origin: .push), settings: settings, context: S.context(noon))
        let polledGroup = try await store.decideAndRecord(
            S.candidate("20", .favourite, group: "fav-7"), settings: settings, context: S.context(noon))
        let grown = try await store.decideAndRecord(
            S.candidate("21", .favourite, group: "fav-7", count: 2), settings: settings, context: S.context(noon))
        #expect(pushed.label == "raise" && polledGroup.label == "drop.alreadyRaised" && grown.label == "update")
        #expect(grown.request?.identifier == pushed.request?.identifier)
    }

    @Test func aHoldRecordsNothingSoTheSameCandidateRaisesLater() async throws {
        let store = try S.store()
        var settings = NotificationSettings()
        settings.quietHours = QuietHours(start: (22, 0), end: (7, 0))
        let held = try await store.decideAndRecord(
            S.candidate("30"), settings: settings, context: S.context(S.date(2026, 6, 10, 23)))
        #expect(held.label == "hold.quietHours")
        #expect(try await store.raisedState(for: S.candidate("30")) == .none)
        let morning = try await store.decideAndRecord(
            S.candidate("30"), settings: settings, context: S.context(S.date(2026, 6, 11, 7)))
        #expect(morning.label == "raise")
    }

    @Test func candidatesComeFromV1NotificationsV2GroupsAndPushPayloads() throws {
        let notification = try S.decode(
            MastodonNotification.self,
            """
            {"id": 1001, "type": "mention", "group_key": "ungrouped-1001",
             "account": {"id": "42", "acct": "bob@other.example", "display_name": "Bob"},
             "status": {"id": "900", "content": "<p>hi</p>", "visibility": "direct",
                        "in_reply_to_id": "800", "in_reply_to_account_id": "1"}}
            """)
        let reply = try #require(
            NotificationCandidate(notification, account: S.account, origin: .stream, readerID: "1"))
        #expect(reply.category == .reply && reply.serverID == "1001" && reply.isPrivateMention)
        #expect(reply.conversationID == "800")
        let mention = try #require(NotificationCandidate(notification, account: S.account, origin: .stream))
        #expect(mention.category == .mention)

        let page = try S.decode(
            MastodonGroupedNotifications.self,
            """
            {"notification_groups": [
               {"group_key": "favourite-900", "type": "favourite", "notifications_count": 3,
                "most_recent_notification_id": 77, "sample_account_ids": ["42"], "status_id": "900"},
               {"group_key": "admin-1", "type": "admin.sign_up", "most_recent_notification_id": "78"}],
             "accounts": [{"id": "42", "acct": "bob", "display_name": ""}],
             "statuses": [{"id": "900", "content": "mine"}]}
            """)
        let group = try #require(
            NotificationCandidate(page.notificationGroups[0], page: page, account: S.account, origin: .poll))
        #expect(group.serverID == "77" && group.groupCount == 3 && group.author?.shownName == "bob")
        #expect(NotificationCandidate(page.notificationGroups[1], page: page, account: S.account, origin: .poll) == nil)

        let payload = try JSONValue(
            parsing:
                #"{"notification_id": 5, "notification_type": "favourite", "title": "Bob favourited", "body": "a & b <3\n<b>x</b>", "icon": ""}"#
        )
        let pushed = try #require(NotificationCandidate(pushPayload: payload, account: S.account))
        #expect(pushed.serverID == "5" && pushed.origin == .push && pushed.author == nil)
        let request = NotificationContentBuilder.request(for: pushed, context: .init())
        #expect(request.title.text == "Bob favourited" && request.body.text == "a & b <3\n<b>x</b>")
        let unusable = try JSONValue(parsing: #"{"title": "x"}"#)
        #expect(NotificationCandidate(pushPayload: unusable, account: S.account) == nil)
    }
}
