import Foundation
import TidingsCore
import TidingsMastodon
import TidingsSandbox
import TidingsSandboxKit

/// The demo's Mastodon part.
let mastodonDemoPart = DemoPart(
    name: "mastodon", title: "Mastodon: an account through MastodonSync on a virtual clock",
    run: { try await mastodonDemo() })

/// A stretch of one account's life against the in-process sandbox, on a `TestClock` (the same output every run):
/// capabilities and the tier, a cold load, a burst larger than a page that leaves a gap above the page, the gap
/// filled upwards, a read marker synced; each step with the requests it spent (counted at the transport).
func mastodonDemo() async throws {
    let clock = TestClock()
    let epoch = Date(timeIntervalSince1970: 1_780_000_000)
    let now: @Sendable () -> Date = { epoch.addingTimeInterval(Double(clock.now.offset.components.seconds)) }
    let server = MastodonSandboxServer(now: now)
    let alice = await server.addAccount(username: "alice", token: "alice-demo-token")
    let bob = await server.addAccount(username: "bob", token: "bob-demo-token")
    await server.follow(alice, bob)
    for index in 0..<30 { await server.post(as: bob, "<p>morning \(index)</p>") }
    let http = server.httpServer(clock: clock)
    let transport = MastodonCountingTransport(MastodonSandboxTransport(server: http))
    let client = MastodonAPIClient(
        server: URL(string: "https://sandbox.invalid")!, accountKey: "alice@sandbox",
        authorization: MastodonAuthorization(token: "alice-demo-token"), transport: transport, now: now)
    let store = MastodonTimelineStore(
        database: try SQLiteDatabase.inMemory(schema: MastodonTimelineSchema.schema), now: now)
    let sync = MastodonSync(clock: clock, settings: MastodonPollSettings(preset: .manual), random: { 0.5 })
    var spent = 0
    func requests() -> Int {
        let total = transport.snapshot.requests
        defer { spent = total }
        return total - spent
    }

    let engine = await sync.addAccount(client: client, store: store)
    let capabilities = try await engine.capabilities()
    let active = MastodonTierPolicy.tiers(
        capabilities: capabilities, app: MastodonAppState(foreground: true, online: true, isActiveAccount: true),
        push: .none, auth: .signedIn)
    let background = MastodonTierPolicy.tiers(
        capabilities: capabilities, app: MastodonAppState(foreground: false, online: true, isActiveAccount: true),
        push: .none, auth: .signedIn)
    print(
        "Server: Mastodon \(capabilities.versionString), streaming \(capabilities.offersStreaming ? "offered" : "not offered")."
    )
    print(
        "  Tier in the foreground: \(describe(active)); in the background: \(describe(background)).  [\(requests()) requests]"
    )

    let cold = try await engine.refresh()
    print("08:00  cold load: \(cold.inserted) statuses.  [\(requests()) request(s)]")

    await clock.advance(by: .seconds(4 * 3600))
    for index in 0..<45 { await server.post(as: bob, "<p>noon \(index)</p>") }
    let burst = try await engine.refresh()
    let afterBurst = try await engine.entries()
    print(
        "12:00  45 new posts, more than a page (40): \(burst.inserted) fetched with min_id right above the stored "
            + "newest, \(burst.newerRemain ? "a gap left above them (newer posts remain)" : "no gap").  "
            + "[\(requests()) request(s)]")
    print("       timeline: \(layout(afterBurst))")

    var filled = 0
    var closed = false
    while let gap = try await engine.entries().last(where: \.isGap) {
        let result = try await engine.loadGap(position: gap.position)
        filled += result.inserted
        closed = result.gapClosed
        if !result.gapClosed && result.inserted == 0 { break }
    }
    let newer = try await engine.refresh()
    print(
        "12:01  gap loaded (upwards, from the newest stored): \(filled) statuses were in it, \(closed ? "closed" : "still open"); "
            + "then \(newer.inserted) newer on top.  "
            + "[\(requests()) request(s)]")
    print("       timeline: \(layout(try await engine.entries()))")

    if let newest = try await engine.entries().last(where: { !$0.isGap })?.statusID {
        _ = try await engine.markRead(.home, upTo: newest)
        try await engine.enterBackground()
        let stored = try await engine.localMarker(.home)
        print(
            "12:05  read up to \(newest), app to the background: home marker \(stored?.description ?? "-") posted "
                + "(\(await engine.markerPostCount) POST), \(try await engine.unreadPostCount()) unread.  "
                + "[\(requests()) request(s)]")
    }
    await sync.shutdown()
    print("Requests spent in all: \(transport.snapshot.requests).")
}

private func describe(_ tiers: MastodonTiers) -> String {
    let polling: String
    switch tiers.polling {
    case .stopped: polling = "no polling"
    case .adaptive: polling = "adaptive polling"
    case .safetyNet(let minutes): polling = "polling every \(minutes) min as a safety net"
    case .backgroundRefresh: polling = "background refresh only"
    }
    return (tiers.streaming ? "user stream + " : "") + polling
}

/// The timeline newest first as runs: `40 statuses · gap · 30 statuses`.
private func layout(_ entries: [MastodonTimelineEntry]) -> String {
    var parts: [String] = []
    var run = 0
    for entry in entries.reversed() {
        if entry.isGap {
            if run > 0 { parts.append("\(run) statuses") }
            parts.append(entry.content == .gap(.open) ? "open gap" : "unfillable gap")
            run = 0
        } else {
            run += 1
        }
    }
    if run > 0 { parts.append("\(run) statuses") }
    return parts.joined(separator: " · ")
}
