import Testing
import TidingsCore
import TidingsMastodon

/// The interval table, presets, Low Power, "Wi-Fi only", the safety net and which timeline a tick polls,
/// as the pure policy decides them.
@Suite(.timeLimit(.minutes(1))) struct MastodonPollPolicyTests {
    static let adaptive = MastodonTiers(push: false, streaming: false, polling: .adaptive)

    static func inputs(
        tiers: MastodonTiers = adaptive, active: Bool = true, interaction: MastodonInteraction = .interacting,
        lowPower: Bool = false, path: MastodonNetworkPath = .wifi, settings: MastodonPollSettings = .init(),
        visible: String? = "home", homeRecently: Bool = false
    ) -> MastodonPollInputs {
        MastodonPollInputs(
            tiers: tiers, activeAccount: active, interaction: interaction, lowPower: lowPower, path: path,
            settings: settings, visibleTimeline: visible, homeVisibleRecently: homeRecently)
    }

    static func seconds(_ plan: MastodonPollPlan) -> Int64? {
        if case .every(let interval) = plan.schedule { return interval.components.seconds }
        return nil
    }

    @Test func interactionLevelsFollowTheDocumentsThresholds() {
        #expect(MastodonInteraction(idleFor: .seconds(120)) == .interacting)
        #expect(MastodonInteraction(idleFor: .seconds(121)) == .idle)
        #expect(MastodonInteraction(idleFor: .seconds(600)) == .idle)
        #expect(MastodonInteraction(idleFor: .seconds(601)) == .longIdle)
    }

    @Test func normalIsTheDocumentsTable() {
        let expected: [(Bool, MastodonInteraction, Int64)] = [
            (true, .interacting, 30), (true, .idle, 60), (true, .longIdle, 120),
            (false, .interacting, 180), (false, .idle, 300), (false, .longIdle, 600),
        ]
        for (active, interaction, seconds) in expected {
            let plan = MastodonPollPolicy.plan(Self.inputs(active: active, interaction: interaction))
            #expect(Self.seconds(plan) == seconds, "active \(active), \(interaction)")
            // Low Power: every interval ×2.
            let low = MastodonPollPolicy.plan(Self.inputs(active: active, interaction: interaction, lowPower: true))
            #expect(Self.seconds(low) == seconds * 2, "low power, active \(active), \(interaction)")
        }
    }

    @Test func presetsDefineTheirIntervalsAndManualHasNoTimer() {
        let table: [(MastodonPollPreset, [Int64], [Int64])] = [
            (.frequent, [15, 30, 60], [90, 150, 300]),
            (.normal, [30, 60, 120], [180, 300, 600]),
            (.batterySaver, [120, 300, 600], [600, 900, 1800]),
        ]
        let levels: [MastodonInteraction] = [.interacting, .idle, .longIdle]
        for (preset, active, others) in table {
            for (index, level) in levels.enumerated() {
                let settings = MastodonPollSettings(preset: preset)
                let mine = MastodonPollPolicy.plan(Self.inputs(interaction: level, settings: settings))
                let theirs = MastodonPollPolicy.plan(Self.inputs(active: false, interaction: level, settings: settings))
                #expect(Self.seconds(mine) == active[index], "\(preset) active \(level)")
                #expect(Self.seconds(theirs) == others[index], "\(preset) other \(level)")
            }
        }
        let manual = MastodonPollPolicy.plan(Self.inputs(settings: MastodonPollSettings(preset: .manual)))
        #expect(manual.schedule == .onRequest)
        #expect(manual.timeline == "home", "a tick Manual gets (push wake) still refreshes what is visible")
    }

    @Test func wifiOnlyOnAMeteredPathPollsNotificationsOnly() {
        let wifiOnly = MastodonPollSettings(wifiOnly: true)
        for path in [MastodonNetworkPath.cellular, MastodonNetworkPath(satisfied: true, constrained: true)] {
            let plan = MastodonPollPolicy.plan(Self.inputs(path: path, settings: wifiOnly))
            #expect(plan.notificationsOnly)
            #expect(plan.timeline == nil)
            #expect(Self.seconds(plan) == 30, "the cadence stays the table's")
        }
        let onWifi = MastodonPollPolicy.plan(Self.inputs(path: .wifi, settings: wifiOnly))
        #expect(!onWifi.notificationsOnly)
        #expect(onWifi.timeline == "home")
        let cellularAllowed = MastodonPollPolicy.plan(Self.inputs(path: .cellular))
        #expect(!cellularAllowed.notificationsOnly)
    }

    @Test func theVisibleTimelineIsPolledInsteadOfHomeAndHomeOnlyWhenRecentlyVisible() {
        #expect(MastodonPollPolicy.plan(Self.inputs(visible: "tag:swift")).timeline == "tag:swift")
        #expect(MastodonPollPolicy.plan(Self.inputs(visible: nil, homeRecently: true)).timeline == "home")
        #expect(MastodonPollPolicy.plan(Self.inputs(visible: nil, homeRecently: false)).timeline == nil)
    }

    @Test func aStreamLeavesASafetyNetAndTheBackgroundLeavesNoTimer() {
        let streaming = MastodonTiers(push: false, streaming: true, polling: .safetyNet(minutes: 5))
        let pushedStreaming = MastodonTiers(push: true, streaming: true, polling: .safetyNet(minutes: 10))
        #expect(Self.seconds(MastodonPollPolicy.plan(Self.inputs(tiers: streaming))) == 300)
        #expect(Self.seconds(MastodonPollPolicy.plan(Self.inputs(tiers: pushedStreaming))) == 600)
        #expect(Self.seconds(MastodonPollPolicy.plan(Self.inputs(tiers: streaming, lowPower: true))) == 600)
        let manual = MastodonPollSettings(preset: .manual)
        #expect(MastodonPollPolicy.plan(Self.inputs(tiers: streaming, settings: manual)).schedule == .onRequest)

        let background = MastodonTiers(push: false, streaming: false, polling: .backgroundRefresh)
        let plan = MastodonPollPolicy.plan(Self.inputs(tiers: background))
        #expect(plan.schedule == .onRequest)
        #expect(plan.timeline == nil, "the background never fetches timelines")
        let stopped = MastodonTiers(push: false, streaming: false, polling: .stopped)
        #expect(MastodonPollPolicy.plan(Self.inputs(tiers: stopped)).schedule == .onRequest)
    }

    @Test func theBackgroundRefreshHintIsTheConfiguredIntervalNeverUnderFifteenMinutes() async {
        let clock = TestClock()
        let cases: [(MastodonPollSettings, Int64)] = [
            (MastodonPollSettings(preset: .normal), 900),
            (MastodonPollSettings(preset: .frequent), 900),
            (MastodonPollSettings(preset: .batterySaver), 1800),
            (MastodonPollSettings(preset: .manual), 1800),
            (MastodonPollSettings(backgroundRefreshInterval: .seconds(300)), 900),
            (MastodonPollSettings(backgroundRefreshInterval: .zero), 900),
            (MastodonPollSettings(backgroundRefreshInterval: .seconds(2400)), 2400),
        ]
        for (settings, seconds) in cases {
            let scheduler = MastodonPollScheduler(clock: clock, settings: settings)
            #expect(await scheduler.backgroundRefreshHint == .seconds(seconds))
            #expect(await scheduler.backgroundRefresh().nextRefreshIn == .seconds(seconds))
        }
    }
}
