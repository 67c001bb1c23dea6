import Testing

@testable import TidingsOpenMates

/// The status rules step by step: pending until the server's data completes the sync; never by time.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesSyncStatusTests {
    @Test func pendingFromTheRequestUntilCompleteAndEveryChatReportedIsStored() {
        var tracker = OpenMatesSyncStatusTracker()
        #expect(tracker.status.sync == .idle && !tracker.status.syncingIndicator)
        tracker.connecting()
        tracker.connected()
        tracker.syncRequested()
        #expect(tracker.status.syncingIndicator)
        tracker.apply(.cacheStatus(isPrimed: true, chatCount: 3), storedChatCount: 0)
        tracker.apply(.phaseArrived("phase1"), storedChatCount: 1)
        #expect(tracker.status.sync == .pending)
        tracker.apply(.syncComplete(phase: "all"), storedChatCount: 2)
        #expect(tracker.status.sync == .pending)
        tracker.reevaluate(storedChatCount: 3)
        #expect(tracker.status.sync == .complete && !tracker.status.syncingIndicator)
    }

    @Test func aColdCacheKeepsItPendingUntilPrimedAndAFreshRequestCompletes() {
        var tracker = OpenMatesSyncStatusTracker()
        tracker.connected()
        tracker.syncRequested()
        tracker.apply(.cacheStatus(isPrimed: false, chatCount: 0), storedChatCount: 0)
        tracker.apply(.syncComplete(phase: "all"), storedChatCount: 0)
        #expect(tracker.status.sync == .pending)
        tracker.apply(.requestFreshSync, storedChatCount: 0)
        tracker.syncRequested()
        #expect(tracker.status.sync == .pending)
        tracker.apply(.syncComplete(phase: "all"), storedChatCount: 0)
        #expect(tracker.status.sync == .complete)
    }

    /// `sync_status_response` may come after `phased_sync_complete` (the public server handles a connection's
    /// frames in order): until it says the cache is primed, a cold cache answered from the database is possible.
    @Test func phasedSyncCompleteBeforeTheCacheStatusLeavesItPending() {
        var tracker = OpenMatesSyncStatusTracker()
        tracker.connected()
        tracker.syncRequested()
        tracker.apply(.syncComplete(phase: "all"), storedChatCount: 0)
        #expect(tracker.status.sync == .pending)
        tracker.apply(.cacheStatus(isPrimed: true, chatCount: 0), storedChatCount: 0)
        #expect(tracker.status.sync == .complete)
        // A new connection asks again: the server may have restarted cold.
        tracker.connected()
        tracker.syncRequested()
        tracker.apply(.syncComplete(phase: "all"), storedChatCount: 0)
        #expect(tracker.status.sync == .pending && tracker.status.cacheIsPrimed == nil)
    }

    @Test func thinEventsDoNotCompleteAndAReconnectMakesItPendingAgain() {
        var tracker = OpenMatesSyncStatusTracker()
        tracker.syncRequested()
        tracker.apply(.cacheStatus(isPrimed: true, chatCount: 0), storedChatCount: 0)
        tracker.apply(.thinEvent(type: "phase_2_last_20_chats_ready"), storedChatCount: 0)
        #expect(tracker.status.sync == .pending)
        tracker.apply(.syncComplete(phase: "all"), storedChatCount: 0)
        #expect(tracker.status.sync == .complete)
        // A reconnect: a new request is pending again whatever was complete before.
        tracker.reconnecting(attempt: 1)
        #expect(tracker.status.offlineBanner && tracker.status.connectionStatus == .reconnecting(attempt: 1))
        tracker.connected()
        tracker.syncRequested()
        #expect(tracker.status.sync == .pending && !tracker.status.offlineBanner)
    }

    @Test func aServerCountAboveTheWindowIsSatisfiedByAFullWindow() {
        var tracker = OpenMatesSyncStatusTracker(storeWindow: 100)
        tracker.syncRequested()
        tracker.apply(.cacheStatus(isPrimed: true, chatCount: nil), storedChatCount: 99)
        tracker.apply(.totalChatCount(250), storedChatCount: 99)
        tracker.apply(.syncComplete(phase: "all"), storedChatCount: 99)
        #expect(tracker.status.sync == .pending)
        tracker.reevaluate(storedChatCount: 100)
        #expect(tracker.status.sync == .complete)
    }

    @Test func failureIsVisible() {
        var tracker = OpenMatesSyncStatusTracker()
        tracker.failed("gave up")
        #expect(tracker.status.connectionStatus == .failed && tracker.status.offlineBanner)
        #expect(tracker.status.lastError == "gave up")
    }
}
