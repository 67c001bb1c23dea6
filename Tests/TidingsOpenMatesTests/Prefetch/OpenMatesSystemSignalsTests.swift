import Testing
import TidingsCore

@testable import TidingsOpenMates

/// The platform-neutral part of the Apple glue for prefetch conditions: system values → conditions (a pure
/// function), and the feed that yields conditions only when they change.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesSystemSignalsTests {
    @Test func signalsMapToConditions() {
        #expect(OpenMatesSystemSignals().conditions == .unknown)
        #expect(!OpenMatesSystemSignals().conditions.allowsPrefetch)
        let wifi = OpenMatesSystemSignals(pathStatus: .satisfied)
        #expect(wifi.conditions == OpenMatesPrefetchConditions(isOnline: true))
        #expect(wifi.conditions.allowsPrefetch)
        let cases: [(OpenMatesSystemSignals, OpenMatesPrefetchConditions.Block?)] = [
            (OpenMatesSystemSignals(pathStatus: .unsatisfied), .offline),
            (OpenMatesSystemSignals(pathStatus: .requiresConnection), .offline),
            (OpenMatesSystemSignals(pathStatus: .satisfied, isExpensive: true), .expensiveNetwork),
            (OpenMatesSystemSignals(pathStatus: .satisfied, isConstrained: true), .constrainedNetwork),
            (OpenMatesSystemSignals(pathStatus: .satisfied, isLowPowerModeEnabled: true), .lowPowerMode),
            (OpenMatesSystemSignals(pathStatus: .satisfied, thermalStateRawValue: 1), nil),
            (OpenMatesSystemSignals(pathStatus: .satisfied, thermalStateRawValue: 2), .thermalState),
            (OpenMatesSystemSignals(pathStatus: .satisfied, thermalStateRawValue: 3), .thermalState),
            // A level this client does not know is taken as critical, never as cool.
            (OpenMatesSystemSignals(pathStatus: .satisfied, thermalStateRawValue: 7), .thermalState),
            (OpenMatesSystemSignals(pathStatus: .satisfied, thermalStateRawValue: -1), .thermalState),
        ]
        for (signals, block) in cases { #expect(signals.conditions.block == block, "\(signals)") }
        #expect(OpenMatesSystemSignals(thermalStateRawValue: 1).conditions.thermalState == .fair)
        #expect(OpenMatesSystemSignals(thermalStateRawValue: 9).conditions.thermalState == .critical)
    }

    @Test func theFeedYieldsTheInitialConditionsThenOnlyChanges() async {
        let feed = OpenMatesPrefetchConditionsFeed(initial: OpenMatesSystemSignals())
        var iterator = feed.conditions.makeAsyncIterator()
        #expect(await iterator.next() == .unknown)
        #expect(feed.update { $0.pathStatus = .satisfied } == OpenMatesPrefetchConditions(isOnline: true))
        #expect(await iterator.next() == OpenMatesPrefetchConditions(isOnline: true))
        // Nothing the conditions see changed: nothing is yielded.
        #expect(feed.update { $0.pathStatus = .satisfied } == nil)
        #expect(feed.update { $0.thermalStateRawValue = 0 } == nil)
        #expect(feed.update { $0.isLowPowerModeEnabled = true }?.block == .lowPowerMode)
        #expect(await iterator.next()?.block == .lowPowerMode)
        #expect(feed.signals.isLowPowerModeEnabled)
    }

    @Test func aSlowConsumerReadsTheNewestConditions() async {
        let feed = OpenMatesPrefetchConditionsFeed(initial: OpenMatesSystemSignals(pathStatus: .satisfied))
        feed.update { $0.isExpensive = true }
        feed.update {
            $0.isExpensive = false; $0.isConstrained = true
        }
        feed.update { $0.thermalStateRawValue = 2 }
        var iterator = feed.conditions.makeAsyncIterator()
        let newest = await iterator.next()
        #expect(newest?.isConstrained == true && newest?.thermalState == .serious)
    }

    @Test func finishingEndsTheStreamAndRunsTheTerminationOnce() async {
        let stops = LockedState(0)
        let feed = OpenMatesPrefetchConditionsFeed(
            initial: OpenMatesSystemSignals(), onTermination: { stops.withLock { $0 += 1 } })
        var iterator = feed.conditions.makeAsyncIterator()
        #expect(await iterator.next() == .unknown)
        feed.finish()
        #expect(await iterator.next() == nil)
        feed.finish()
        #expect(feed.update { $0.pathStatus = .satisfied } != nil)
        #expect(await iterator.next() == nil)
        #expect(stops.withLock { $0 } == 1)
    }

    @Test func aCancelledConsumerStopsTheSources() async {
        let stops = LockedState(0)
        let feed = OpenMatesPrefetchConditionsFeed(
            initial: OpenMatesSystemSignals(), onTermination: { stops.withLock { $0 += 1 } })
        let consumer = Task {
            var seen = 0
            for await _ in feed.conditions { seen += 1 }
            return seen
        }
        consumer.cancel()
        _ = await consumer.value
        #expect(stops.withLock { $0 } == 1)
    }
}
