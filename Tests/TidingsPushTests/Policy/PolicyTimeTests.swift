import Foundation
import Testing
import TidingsCore
import TidingsPush

@Suite(.timeLimit(.minutes(1))) struct PolicyTimeTests {
    typealias S = PolicyTestSupport
    let night = QuietHours(start: (22, 0), end: (7, 0))

    /// Settings with quiet hours 22:00–07:00.
    var quiet: NotificationSettings { NotificationSettings(quietHours: night) }

    @Test func quietHoursAcrossMidnightHoldUntilTheirEndOnTheTestClock() async {
        let clock = TestClock()
        let wall = NotificationPolicyClock(clock, origin: S.date(2026, 6, 10, 21, 30))
        var decisions: [String] = []
        var holds: [Date] = []
        // 21:30, 22:00, 23:59, 00:30 (next day), 06:59, 07:00 (the end), 12:00.
        for step in [0, 30, 119, 31, 389, 1, 300] {
            await clock.advance(by: .seconds(step * 60))
            let decision = NotificationPolicy.decide(
                S.candidate("1"), settings: quiet, context: S.context(wall.now), raised: .none)
            decisions.append(decision.label)
            if let until = decision.heldUntil { holds.append(until) }
        }
        #expect(
            decisions == [
                "raise", "hold.quietHours", "hold.quietHours", "hold.quietHours", "hold.quietHours", "raise", "raise",
            ])
        #expect(Set(holds) == [S.date(2026, 6, 11, 7)])
    }

    @Test func whatWasHeldIsRaisedAtTheEndUnlessTheMarkerCoveredItMeanwhile() async throws {
        let store = try S.store()
        let clock = TestClock()
        let wall = NotificationPolicyClock(clock, origin: S.date(2026, 6, 10, 23))
        for id: ServerID in ["50", "51"] {
            let held = try await store.decideAndRecord(S.candidate(id), settings: quiet, context: S.context(wall.now))
            #expect(held.label == "hold.quietHours")
        }
        // The end of the window on the clock; "50" was read on another device meanwhile.
        let end = try #require(
            NotificationPolicy.decide(S.candidate("50"), settings: quiet, context: S.context(wall.now), raised: .none)
                .heldUntil)
        let waiter = Task { try await wall.sleep(until: end) }
        await clock.advance(by: .seconds(8 * 3600))
        try await waiter.value
        #expect(wall.now == S.date(2026, 6, 11, 7))
        var labels: [String] = []
        for id: ServerID in ["50", "51"] {
            labels.append(
                try await store.decideAndRecord(
                    S.candidate(id), settings: quiet, context: S.context(wall.now, marker: "50")
                )
                .label)
        }
        #expect(labels == ["drop.coveredByMarker", "raise"])
    }

    @Test func quietHoursFollowWallClockAcrossDSTChanges() {
        let calendar = NotificationCalendar(timeZone: S.berlin)
        // Spring forward (29 March 2026, 02:00 → 03:00): the night is an hour shorter, the end stays 07:00.
        let spring = S.date(2026, 3, 28, 23)
        #expect(calendar.quietEnd(at: spring, night) == S.date(2026, 3, 29, 7))
        #expect(calendar.quietEnd(at: spring, night).timeIntervalSince(spring) == 7 * 3600)
        // Fall back (25 October 2026, 03:00 → 02:00): an hour longer.
        let autumn = S.date(2026, 10, 24, 23)
        #expect(calendar.quietEnd(at: autumn, night).timeIntervalSince(autumn) == 9 * 3600)
        // A window ending inside the skipped hour ends at the next time that exists (03:00).
        let skipped = QuietHours(start: (1, 0), end: (2, 30))
        #expect(calendar.quietEnd(at: S.date(2026, 3, 29, 1, 30), skipped) == S.date(2026, 3, 29, 3))
    }

    @Test func aChangeOfTimeZoneMidTestMovesTheWindowWithThePerson() async {
        let clock = TestClock()
        // 23:00 in Berlin is 17:00 in New York: quiet there, not here.
        let wall = NotificationPolicyClock(clock, origin: S.date(2026, 6, 10, 23))
        let inBerlin = NotificationPolicy.decide(
            S.candidate("1"), settings: quiet, context: S.context(wall.now, zone: S.berlin), raised: .none)
        #expect(inBerlin.label == "hold.quietHours")
        let inNewYork = NotificationPolicy.decide(
            S.candidate("1"), settings: quiet, context: S.context(wall.now, zone: S.newYork), raised: .none)
        #expect(inNewYork.label == "raise")
        // Five hours later it is 22:00 in New York: held until 07:00 New York time.
        await clock.advance(by: .seconds(5 * 3600))
        let later = NotificationPolicy.decide(
            S.candidate("1"), settings: quiet, context: S.context(wall.now, zone: S.newYork), raised: .none)
        #expect(later.heldUntil == S.date(2026, 6, 11, 7, in: S.newYork))
    }

    @Test func digestTimesAreTheChosenHoursAndOneInsideQuietHoursWaitsForTheirEnd() {
        let calendar = NotificationCalendar(timeZone: S.berlin)
        let settings = NotificationSettings(
            quietHours: night, delivery: .digest(hours: [23, 8, 18, 8, 25], urgentMentionsAtOnce: false))
        #expect(settings.delivery.digestHours == [8, 18, 23])
        let times = calendar.digestTimes(after: S.date(2026, 6, 10, 12), settings: settings, count: 4)
        // 18:00; 23:00 is quiet → 07:00; 08:00; then 18:00 the next day.
        #expect(
            times == [
                S.date(2026, 6, 10, 18), S.date(2026, 6, 11, 7), S.date(2026, 6, 11, 8), S.date(2026, 6, 11, 18),
            ])
        // Across the spring DST change the 08:00 delivery stays at 08:00 local time.
        let spring = calendar.digestTimes(after: S.date(2026, 3, 28, 12), settings: settings, count: 3)
        #expect(spring == [S.date(2026, 3, 28, 18), S.date(2026, 3, 29, 7), S.date(2026, 3, 29, 8)])
        #expect(NotificationSettings(delivery: .digest(hours: [], urgentMentionsAtOnce: true)).isDigest == false)
        let jobs = calendar.jobTimes(after: S.date(2026, 6, 10, 12), settings: NotificationSettings(quietHours: night))
        #expect(jobs == [S.date(2026, 6, 11, 7)])
    }

    @Test func aDigestHourThatRepeatsWhenClocksGoBackIsDeliveredOnceAndFollowsAChangeOfZone() async {
        let calendar = NotificationCalendar(timeZone: S.berlin)
        let settings = NotificationSettings(delivery: .digest(hours: [2], urgentMentionsAtOnce: false))
        // 25 October 2026: 02:00–03:00 happens twice in Berlin; the digest comes at the first 02:00 only.
        let evening = S.date(2026, 10, 24, 20)
        let times = calendar.digestTimes(after: evening, settings: settings, count: 2)
        #expect(times.count == 2)
        #expect(times[1].timeIntervalSince(times[0]) == 25 * 3600)
        let clock = TestClock()
        let wall = NotificationPolicyClock(clock, origin: evening)
        await clock.advance(by: .seconds(times[0].timeIntervalSince(evening)))
        #expect(calendar.isDigestDue(now: wall.now, lastDelivered: evening, settings: settings))
        let delivered = wall.now
        await clock.advance(by: .seconds(3600))  // the second 02:00
        #expect(calendar.minuteOfDay(wall.now) == 120)
        #expect(!calendar.isDigestDue(now: wall.now, lastDelivered: delivered, settings: settings))
        // The person flies to New York: the next 02:00 is New York's.
        let newYork = NotificationCalendar(timeZone: S.newYork)
        #expect(
            newYork.digestTimes(after: wall.now, settings: settings, count: 1)
                == [S.date(2026, 10, 25, 2, in: S.newYork)])
    }

    @Test func aDigestHoldsUntilItsTimeAndUrgentMentionsMayComeAtOnce() {
        let noon = S.date(2026, 6, 10, 12)
        let strict = NotificationSettings(delivery: .digest(hours: [18], urgentMentionsAtOnce: false))
        let lenient = NotificationSettings(delivery: .digest(hours: [18], urgentMentionsAtOnce: true))
        let privateMention = S.candidate("1", visibility: .direct)
        let followedMention = S.candidate("2", followed: true)
        let otherMention = S.candidate("3")
        let followedFavourite = S.candidate("4", .favourite, followed: true)
        func label(_ candidate: NotificationCandidate, _ settings: NotificationSettings) -> String {
            NotificationPolicy.decide(candidate, settings: settings, context: S.context(noon), raised: .none).label
        }
        #expect(label(privateMention, strict) == "hold.digest")
        #expect(label(privateMention, lenient) == "raise")
        #expect(label(followedMention, lenient) == "raise")
        #expect(label(otherMention, lenient) == "hold.digest")
        #expect(label(followedFavourite, lenient) == "hold.digest")
        #expect(
            NotificationPolicy.decide(otherMention, settings: strict, context: S.context(noon), raised: .none).heldUntil
                == S.date(2026, 6, 10, 18))
    }

    @Test func aLateJobRaisesTheDigestOnceFromWhatIsStillUnreadAndUnraised() async throws {
        let store = try S.store()
        let settings = NotificationSettings(
            quietHours: night, delivery: .digest(hours: [8, 18], urgentMentionsAtOnce: true))
        let clock = TestClock()
        let wall = NotificationPolicyClock(clock, origin: S.date(2026, 6, 10, 12))
        // An urgent mention raised at once is not in the digest.
        #expect(
            try await store.decideAndRecord(
                S.candidate("60", visibility: .direct), settings: settings, context: S.context(wall.now)
            ).label == "raise")
        let unread = [
            S.candidate("60", visibility: .direct), S.candidate("61", .favourite), S.candidate("62", .follow),
            S.candidate("58"),
        ]
        #expect(
            try await store.deliverDigestIfDue(
                account: S.account, unread: unread, settings: settings, context: S.context(wall.now)) == .notDue)
        // The first call started the digest; the job was scheduled for 18:00 and runs at 19:40.
        await clock.advance(by: .seconds(7 * 3600 + 40 * 60))
        let outcome = try await store.deliverDigestIfDue(
            account: S.account, unread: unread, settings: settings, context: S.context(wall.now, marker: "59"))
        guard case .raise(let summary) = outcome else {
            Issue.record("expected a digest, got \(outcome)")
            return
        }
        #expect(summary.serverIDs == ["61", "62"])
        #expect(summary.title.text == "2 new notifications")
        #expect(summary.title.localized(.german) == "2 neue Benachrichtigungen")
        #expect(summary.identifier == "\(S.account)#digest")
        // Run again at once: not due; at 08:00 the next day, nothing new.
        #expect(
            try await store.deliverDigestIfDue(
                account: S.account, unread: unread, settings: settings, context: S.context(wall.now)) == .notDue)
        await clock.advance(by: .seconds(12 * 3600 + 20 * 60))
        #expect(
            try await store.deliverDigestIfDue(
                account: S.account, unread: unread, settings: settings, context: S.context(wall.now, marker: "59"))
                == .nothingToSay)
    }
}
