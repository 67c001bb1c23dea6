import Foundation
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// The demo's Mastodon part.
let mastodonDemoPart = DemoPart(
    name: "mastodon", title: "Mastodon: a simulated day of one account through MastodonSync, on a virtual clock",
    run: { try await mastodonDemo() })

/// A day of one account against the in-process sandbox, on a `TestClock` (the same output every run). The
/// account is driven only as an app drives `MastodonSync` (`appStateChanged`, `backgroundRefresh`, reading and
/// scrolling into a gap); the scheduler's ticks and the user stream do the syncing while the server produces
/// posts, notifications, an edit, a delete, a marker moved by another device, a network loss and a 429. It
/// prints each tier change, what the events did, the requests of every hour (counted at the transport) and
/// the day's total against a naive 30 s poller.
func mastodonDemo() async throws {
    let clock = TestClock()
    let epoch = Date(timeIntervalSince1970: 1_780_000_000)
    let now: @Sendable () -> Date = { epoch.addingTimeInterval(Double(clock.now.offset.components.seconds)) }
    let server = MastodonSandboxServer(now: now)
    let alice = await server.addAccount(username: "alice", token: "alice-demo-token")
    let bob = await server.addAccount(username: "bob", token: "bob-demo-token")
    let carol = await server.addAccount(username: "carol", token: "carol-demo-token")
    await server.follow(alice, bob)
    for index in 0..<30 { await server.post(as: bob, "<p>yesterday \(index)</p>") }
    let faults = SandboxFaultSwitch()
    let http = server.httpServer(faults: faults, clock: clock)
    let turnstile = MastodonDemoTurnstile(MastodonSandboxTransport(server: http), clock: clock)
    let transport = MastodonCountingTransport(turnstile)
    let key = "alice@sandbox"
    let client = MastodonAPIClient(
        server: URL(string: "https://sandbox.invalid")!, accountKey: key,
        authorization: MastodonAuthorization(token: "alice-demo-token"), transport: transport, now: now)
    // Another device of alice's: its requests are not this device's, so they are not counted.
    let otherDevice = MastodonAPIClient(
        server: URL(string: "https://sandbox.invalid")!, accountKey: key,
        authorization: MastodonAuthorization(token: "alice-demo-token"),
        transport: MastodonSandboxTransport(server: http), now: now)
    let store = MastodonTimelineStore(
        database: try SQLiteDatabase.inMemory(schema: MastodonTimelineSchema.schema), now: now)
    let settings = MastodonPollSettings(preset: .normal)
    let streamWatch = MastodonDemoStreamWatch()
    let sync = MastodonSync(
        clock: clock, settings: settings,
        streamConnector: streamWatch.watching(MastodonSandboxServer.inProcessStreamConnector(http)), now: now,
        random: { 0.5 })
    let day = MastodonDemoDriver(
        clock: clock, sync: sync, key: key, turnstile: turnstile, counter: transport, streamWatch: streamWatch)
    var app = MastodonDemoApp()
    var mark = 0
    /// Starts counting an event's requests.
    func begin() { mark = day.requests }
    /// The requests since ``begin()``.
    func spent() -> String { "[\(day.requests - mark) req]" }
    // In the background nothing is on screen; back in the foreground the account, then Home, appear (one change
    // at a time, as the app's screens do, so the first tick and the stream's backfill do not race).
    func toBackground() async {
        app.foreground = false
        await day.tell(.visibleTimeline(nil), .activeAccount(nil), .foreground(false))
    }
    func toForeground() async {
        app.foreground = true
        await day.tell(.foreground(true), .activeAccount(key), .visibleTimeline(MastodonTimelineKey.homeTimeline))
        _ = try? await day.drive { try await sync.timelineAppeared(MastodonTimelineKey.homeTimeline, account: key) }
        await day.afterStep?()
    }

    // 00:00: the app launches in the background, alice's account restored: capabilities, filters, markers.
    await day.tell(.foreground(false))
    let engine = try await day.drive { await sync.addAccount(client: client, store: store) }
    let capabilities = try await engine.capabilities()
    print(
        "Mastodon \(capabilities.versionString) sandbox in process (streaming "
            + "\(capabilities.offersStreaming ? "offered" : "not offered")), preset \(settings.preset.rawValue); "
            + "alice follows bob, who posted 30 statuses yesterday.")
    var lastTier = ""
    day.afterStep = {
        let tier = MastodonDemoFormat.tier(
            app, stream: await sync.streamState(for: key), plan: await sync.scheduler.plan(for: key))
        if tier != lastTier {
            print("\(day.time)  tier → \(tier)")
            lastTier = tier
        }
    }
    await day.afterStep?()
    print("00:00  launched in the background: capabilities, filters, markers read \(spent())")

    // The system's background refresh, at the interval sync asks for.
    var nextRefresh = Duration.zero
    var refreshes = 0
    func backgroundRefreshes(until hours: Int, _ minutes: Int = 0) async throws {
        let limit = Duration.seconds(hours * 3600 + minutes * 60)
        while true {
            if nextRefresh <= clock.now.offset { nextRefresh = clock.now.offset + (await sync.backgroundRefreshHint) }
            guard nextRefresh < limit else { break }
            let at = Int(nextRefresh.components.seconds)
            await day.pass(to: at / 3600, (at / 60) % 60, at % 60)
            let report = try await day.drive { await sync.backgroundRefresh() }
            refreshes += report.polled.count
            nextRefresh = clock.now.offset + report.nextRefreshIn
        }
        await day.pass(to: hours, minutes)
    }
    begin()
    try await backgroundRefreshes(until: 3, 7)
    await server.follow(carol, alice)
    try await backgroundRefreshes(until: 7)
    print(
        "00:00–07:00  \(refreshes) background refreshes (notifications, unread count); carol follows at 03:07: "
            + "\(try await engine.notificationGroups().count) notification stored \(spent())")

    // 07:00: the app in the foreground with Home on screen.
    begin()
    await toForeground()
    print("07:00  foreground, Home on screen: \(try await engine.entries().count) statuses loaded \(spent())")

    await day.pass(to: 7, 31, 17)
    begin()
    var read = (messages: day.streamMessages, sleepers: day.sleepers)
    for index in 0..<3 {
        await server.post(as: bob, "<p>morning \(index) @alice</p>", mentioning: index == 0 ? [alice] : [])
    }
    // 3 updates and a notification: a Home window and a notifications window.
    await day.awaitStream(3 + 1, since: read, windows: 2)
    await day.pass(to: 7, 32)
    print(
        "07:31  bob posts 3, one mentions alice; by 07:32: \(try await engine.entries().count) statuses, "
            + "\(try await engine.notificationGroups().count) notifications \(spent())")

    // A burst larger than a page: the refresh upwards stores one page and leaves a gap.
    await day.pass(to: 8, 12, 41)
    begin()
    var burst: [String] = []
    let beforeBurst = try await engine.entries().filter { !$0.isGap }.count
    read = (day.streamMessages, day.sleepers)
    for index in 0..<45 { burst.append(await server.post(as: bob, "<p>thread \(index)</p>")) }
    await day.awaitStream(45, since: read, windows: 1)
    await day.pass(to: 8, 13)
    print(
        "08:12  bob posts 45 at once (a page is 40): the stream's refresh stores "
            + "\(try await engine.entries().filter { !$0.isGap }.count - beforeBurst), the oldest (min_id): "
            + "\(MastodonDemoFormat.layout(try await engine.entries())) \(spent())")
    await day.pass(to: 8, 14, 9)
    begin()
    let morningGap = try await scrollIntoGaps(engine, day)
    await day.tell(.interaction)
    print("08:14  alice scrolls into the gap: \(morningGap) \(spent())")

    await day.pass(to: 9, 3, 27)
    begin()
    let edited = ServerID(burst[44])
    read = (day.streamMessages, day.sleepers)
    await server.edit(burst[44], content: "<p>thread 44, edited</p>")
    await day.awaitStream(1, since: read, windows: 0)
    await day.pass(to: 9, 4)
    let editSeen = try await engine.status(edited)?.content.contains("edited") == true
    print("09:03  bob edits a post: \(editSeen ? "replaced in place" : "not seen yet") by 09:04 \(spent())")
    await day.pass(to: 9, 21, 55)
    begin()
    let deleted = ServerID(burst[43])
    read = (day.streamMessages, day.sleepers)
    await server.delete(burst[43])
    await day.awaitStream(1, since: read, windows: 0)
    await day.pass(to: 9, 22)
    let deleteSeen = try await !engine.entries().contains { $0.statusID == deleted }
    print("09:21  bob deletes a post: \(deleteSeen ? "gone from the cache" : "still cached") by 09:22 \(spent())")

    // Reading: the home marker moves and is posted after the debounce.
    await day.pass(to: 10, 30, 5)
    begin()
    let postsBefore = await engine.markerPostCount
    await day.tell(.interaction)
    guard let newest = try await engine.entries().last(where: { !$0.isGap })?.statusID else {
        throw ValidationError("the demo's Home is empty")
    }
    _ = try await engine.markRead(.home, upTo: newest)
    await day.pass(to: 10, 31)
    // The engine counts a post before its request reaches the transport, on a task out of the driver's sight.
    await day.awaitRequests(mark + (await engine.markerPostCount - postsBefore))
    print(
        "10:30  alice reads to the newest: the home marker is posted after the "
            + "\(MastodonDemoFormat.duration(MastodonAccountEngine.markerPostInterval)) debounce "
            + "(\(await engine.markerPostCount) POST) \(spent())")

    // Lunch in the background; another device reads further meanwhile.
    await day.pass(to: 12)
    begin()
    await toBackground()
    try await backgroundRefreshes(until: 12, 20)
    await day.pass(to: 12, 20, 33)
    for index in 0..<5 { await server.post(as: bob, "<p>lunch \(index)</p>") }
    try await backgroundRefreshes(until: 12, 40)
    guard let otherNewest = try await otherDevice.homeTimeline(MastodonPageRange(limit: 1)).items.first?.id else {
        throw ValidationError("the demo's server has no Home")
    }
    _ = try await otherDevice.saveMarkers(home: otherNewest)
    try await backgroundRefreshes(until: 13)
    print("12:00–13:00  bob posts 5 at 12:20; alice reads them on another device at 12:40 \(spent())")

    begin()
    let beforeLunch = try await engine.entries().count
    app.lowPower = true
    await day.tell(.lowPower(true))
    await toForeground()
    let pickedUp = try await engine.localMarker(.home) == otherNewest
    print(
        "13:00  foreground in Low Power: \(try await engine.entries().count - beforeLunch) new, the other device's "
            + "marker \(pickedUp ? "picked up" : "not picked up"): \(try await engine.unreadPostCount()) unread \(spent())"
    )

    // The network goes; bob posts more than a page meanwhile; the streaming server breaks too.
    await day.pass(to: 14, 30)
    app.online = false
    await day.tell(.networkPath(.offline))
    await day.pass(to: 14, 41, 19)
    // More than the two pages a tick may read beside the count (three requests a tick): a gap stays on top.
    let afternoonPosts = 200
    for index in 0..<afternoonPosts { await server.post(as: bob, "<p>afternoon \(index)</p>") }
    await day.pass(to: 15, 10)
    begin()
    let beforeReturn = try await engine.entries().filter { !$0.isGap }.count
    faults.add(.status(503), on: .path("/api/v1/streaming"))
    app.online = true
    await day.tell(.networkPath(.wifi))
    await day.pass(to: 15, 11)
    let gaveUp: Bool
    if case .gaveUp = await sync.streamState(for: key) { gaveUp = true } else { gaveUp = false }
    print(
        "15:10  back online, bob posted \(afternoonPosts): a tick stores "
            + "\(try await engine.entries().filter { !$0.isGap }.count - beforeReturn): "
            + "\(MastodonDemoFormat.layout(try await engine.entries())); streaming "
            + "answers 503: \(gaveUp ? "the stream gives up" : "the stream is \(await sync.streamState(for: key))") "
            + spent())
    await day.pass(to: 15, 12, 30)
    begin()
    let afternoonGap = try await scrollIntoGaps(engine, day)
    await day.tell(.interaction)
    print("15:12  alice scrolls into the gap: \(afternoonGap) \(spent())")

    await day.pass(to: 16)
    app.lowPower = false
    await day.tell(.lowPower(false))
    await day.pass(to: 16, 47, 13)
    let first429 = turnstile.requestSeconds.count
    faults.add(.tooManyRequests(retryAfterSeconds: 300), on: .any, times: 1)
    await day.pass(to: 17)
    faults.clear()
    let after429 = turnstile.requestSeconds.dropFirst(first429).map(MastodonDemoFormat.clock)
    print(
        "16:47  the server answers a request at \(after429.first ?? "-") with 429, Retry-After 300 s; the next "
            + "goes at \(after429.dropFirst().first ?? "-"); 17:00 streaming works again")

    await day.pass(to: 18, 5, 31)
    begin()
    await server.post(as: carol, "<p>@alice dinner?</p>", mentioning: [alice])
    await day.pass(to: 18, 10)
    print(
        "18:05  carol mentions alice: \(try await engine.notificationGroups().count) notifications by 18:10 \(spent())")

    await day.pass(to: 19)
    begin()
    await toBackground()
    try await backgroundRefreshes(until: 20, 30)
    print("19:00–20:30  dinner, the app in the background \(spent())")
    await toForeground()
    await day.pass(to: 22)
    begin()
    await toBackground()
    try await backgroundRefreshes(until: 24)
    print("22:00–24:00  the night in the background \(spent())")
    await day.finish()

    let total = day.perHour.reduce(0, +)
    print("Requests per hour: " + day.perHour.map(String.init).joined(separator: " "))
    let naive = 24 * 3600 / 30
    print(
        "Day: \(MastodonDemoFormat.grouped(total)) requests (\(total / 24) an hour on average; "
            + "\(transport.snapshot.requests) counted at the transport) vs \(MastodonDemoFormat.grouped(naive)) for a "
            + "naive poller asking every 30 s: \(String(format: "%.1f", Double(naive) / Double(max(total, 1))))× fewer."
    )
}

/// The reader scrolls up into each open gap of Home: `loadGap` from its newer side until it closes.
private func scrollIntoGaps(_ engine: MastodonAccountEngine, _ day: MastodonDemoDriver) async throws -> String {
    var loads = 0
    var statuses = 0
    var closed = 0
    while let gap = try await engine.entries().last(where: { $0.content == .gap(.open) }) {
        let result = try await day.drive { try await engine.loadGap(position: gap.position) }
        loads += 1
        statuses += result.inserted
        if result.gapClosed { closed += 1 }
        if !result.gapClosed && result.inserted == 0 { break }
    }
    return "loadGap ×\(loads), \(statuses) statuses, \(closed) gap(s) closed → "
        + MastodonDemoFormat.layout(try await engine.entries())
}
