import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsNet
import TidingsSandbox
import TidingsSandboxKit

/// The user stream: against the sandbox's stream over loopback WebSocket (events reach the engine), and with
/// scripted connections on the virtual clock (failures, give-up, resume, the 30-second rule, backfill).
@Suite(.timeLimit(.minutes(1)))
struct UserStreamTests {
    /// A connection the test drives: it ends when the test says so.
    struct ScriptedConnection: MastodonStreamConnection {
        let messages: AsyncThrowingStream<WebSocketMessage, any Error>
        let continuation: AsyncThrowingStream<WebSocketMessage, any Error>.Continuation
        init() { (messages, continuation) = AsyncThrowingStream.makeStream() }
        func close() async { continuation.finish() }
    }

    /// Hands out what the test queued: a connection, or a failure; records every URL and header asked for.
    final class ScriptedConnector: Sendable {
        private let state = LockedState<(script: [ScriptedConnection?], asked: [(URL, [String])])>(([], []))
        func queue(_ connection: ScriptedConnection?) { state.withLock { $0.script.append(connection) } }
        var attempts: Int { state.withLock { $0.asked.count } }
        var asked: [(URL, [String])] { state.withLock { $0.asked } }
        var connector: MastodonStreamConnector {
            { url, headers in
                let next = self.state.withLock { state -> ScriptedConnection?? in
                    state.asked.append((url, headers.map { "\($0.name): \($0.value)" }))
                    return state.script.isEmpty ? .some(nil) : state.script.removeFirst()
                }
                guard let connection = next ?? nil else { throw MastodonError.transport }
                return connection
            }
        }
    }

    static func next(
        _ states: inout ChangeSubscription<MastodonStreamState>.AsyncIterator,
        where matches: (MastodonStreamState) -> Bool
    ) async -> MastodonStreamState? {
        while let state = await states.next() { if matches(state) { return state } }
        return nil
    }

    static func next(
        _ changes: inout ChangeSubscription<MastodonEngineChange>.AsyncIterator,
        where matches: (MastodonEngineChange) -> Bool
    ) async -> MastodonEngineChange? {
        while let change = await changes.next() { if matches(change) { return change } }
        return nil
    }

    @Test func eventsOverLoopbackReachTheEngine() async throws {
        let fixture = try await EngineFixture()
        let ids = await fixture.postMany(2)
        try await fixture.engine.refresh()
        let listener = try fixture.http.serve()
        defer { listener.stop() }
        // The capabilities come over loopback, so the advertised stream is the listener's ws:// URL.
        let loopback = MastodonAPIClient(
            server: listener.url, accountKey: "alice@loopback",
            authorization: MastodonAuthorization(token: "alice-token"),
            transport: HTTPClient(configuration: .init(timeout: .seconds(20))))
        let capabilities = try await MastodonCapabilities.fetch(with: loopback)
        // REST in process, at the listener's URL: the advertised ws:// stream is then the API's own loopback host,
        // the one place a plain-http API's token may go (MastodonStreamingTrust).
        let client = MastodonAPIClient(
            server: listener.url, accountKey: fixture.engine.client.accountKey,
            authorization: MastodonAuthorization(token: "alice-token"),
            transport: MastodonSandboxTransport(server: fixture.http))
        let engine = MastodonAccountEngine(
            client: client, store: fixture.store, capabilities: capabilities, clock: fixture.clock)
        let stream = MastodonUserStream(
            engine: engine, connector: MastodonUserStream.webSocketConnector(connectTimeout: .seconds(20)),
            clock: fixture.clock)
        var states = stream.stateChanges().makeAsyncIterator()
        var changes = engine.changes().makeAsyncIterator()
        await stream.start()
        #expect(await Self.next(&states) { $0 == .open } == .open)
        await fixture.server.waitForOpenStream()

        // status.update replaces in place; delete removes at once.
        await fixture.server.edit(ids[1].rawValue, content: "edited on the server")
        _ = await Self.next(&changes) { $0 == .statusUpdated(ids[1]) }
        #expect(try await engine.status(ids[1])?.content == "edited on the server")

        // Three updates, then a delete: once the delete is applied every update before it was handled, and
        // they wait together for one Home refresh.
        let fresh = await fixture.postMany(3)
        await fixture.server.delete(ids[0].rawValue)
        _ = await Self.next(&changes) { $0 == .deleted([ids[0]]) }
        #expect(try await engine.status(ids[0]) == nil)
        await fixture.clock.waitForSleepers(1)
        await fixture.clock.advance(by: MastodonUserStream.updateCoalescing)
        _ = await Self.next(&changes) { if case .timeline = $0 { true } else { false } }
        #expect(await stream.refreshesTriggered == 1)
        #expect(try await fixture.cachedHome() == [fresh[2], fresh[1], fresh[0], ids[1]])

        // Two mentions make one notifications poll.
        await fixture.server.post(as: fixture.bob, "hi @alice", mentioning: [fixture.alice])
        await fixture.server.post(as: fixture.bob, "hi again @alice", mentioning: [fixture.alice])
        await fixture.server.delete(fresh[0].rawValue)
        _ = await Self.next(&changes) { $0 == .deleted([fresh[0]]) }
        await fixture.clock.waitForSleepers(2)
        await fixture.clock.advance(by: MastodonUserStream.updateCoalescing)
        _ = await Self.next(&changes) { if case .notifications = $0 { true } else { false } }
        #expect(await stream.notificationPollsTriggered == 1)
        #expect(try await engine.notificationGroups().count == 2)

        // Background: the socket closes at once.
        await stream.stop()
        #expect(await stream.state == .stopped)
    }

    @Test func theTokenTravelsInTheHeaderOnly() async throws {
        let fixture = try await EngineFixture()
        let script = ScriptedConnector()
        script.queue(ScriptedConnection())
        let stream = MastodonUserStream(engine: fixture.engine, connector: script.connector, clock: fixture.clock)
        var states = stream.stateChanges().makeAsyncIterator()
        await stream.start()
        _ = await Self.next(&states) { $0 == .open }
        let (url, headers) = try #require(script.asked.first)
        #expect(url.absoluteString == "wss://sandbox.invalid/api/v1/streaming?stream=user")
        #expect(!url.absoluteString.contains("alice-token"))
        #expect(headers == ["Authorization: Bearer alice-token"])
        await stream.stop()
    }

    @Test func fiveFailuresInARowGiveUpUntilResumed() async throws {
        let fixture = try await EngineFixture()
        let script = ScriptedConnector()  // nothing queued: every attempt fails
        let stream = MastodonUserStream(
            engine: fixture.engine, connector: script.connector, clock: fixture.clock,
            backoff: Backoff(base: .seconds(1), cap: .seconds(60), random: { 0.5 }))
        var states = stream.stateChanges().makeAsyncIterator()
        await stream.start()
        var seen: [MastodonStreamState] = []
        while let state = await states.next() {
            seen.append(state)
            if case .gaveUp = state { break }
            if case .waiting = state {
                #expect(await fixture.clock.waitForSleepers(1), "the stream waits on the clock")
                // To this wait's own deadline, which wakes it alone: a jump past it may also wake the waits of
                // the failures after it, and the states still unread would then find no sleeper left.
                if let deadline = fixture.clock.earliestPendingDeadline { await fixture.clock.advance(to: deadline) }
            }
        }
        #expect(script.attempts == MastodonUserStream.maximumFailures)
        #expect(seen.last == .gaveUp(.tooManyFailures(5, lastError: "MastodonError.transport")))
        #expect(seen.contains(.waiting(failures: 4)))
        // Nothing more until the app comes back.
        await fixture.clock.advance(by: .seconds(600))
        #expect(script.attempts == 5)
        script.queue(ScriptedConnection())
        await stream.resume()
        _ = await Self.next(&states) { $0 == .open }
        #expect(script.attempts == 6)
        await stream.stop()
    }

    @Test func aDropWithinThirtySecondsCountsAsAFailureALaterOneDoesNot() async throws {
        let fixture = try await EngineFixture()
        let script = ScriptedConnector()
        let first = ScriptedConnection()
        let second = ScriptedConnection()
        script.queue(first)
        script.queue(second)
        script.queue(ScriptedConnection())
        let stream = MastodonUserStream(
            engine: fixture.engine, connector: script.connector, clock: fixture.clock,
            backoff: Backoff(base: .seconds(1), cap: .seconds(60), random: { 0.5 }))
        var states = stream.stateChanges().makeAsyncIterator()
        await stream.start()
        _ = await Self.next(&states) { $0 == .open }
        await fixture.clock.advance(by: .seconds(29))
        first.continuation.finish(throwing: WebSocketError.connectionLost)
        #expect(await Self.next(&states) { if case .waiting = $0 { true } else { false } } == .waiting(failures: 1))
        await fixture.clock.waitForSleepers(1)
        await fixture.clock.advance(by: .seconds(60))
        _ = await Self.next(&states) { $0 == .open }
        await fixture.clock.advance(by: .seconds(30))
        second.continuation.finish(throwing: WebSocketError.connectionLost)
        #expect(await Self.next(&states) { if case .waiting = $0 { true } else { false } } == .waiting(failures: 0))
        await stream.stop()
    }

    @Test func aReconnectBackfillsWhatWasPostedWhileDown() async throws {
        let fixture = try await EngineFixture()
        await fixture.postMany(2)
        try await fixture.engine.refresh()
        let script = ScriptedConnector()
        let first = ScriptedConnection()
        script.queue(first)
        script.queue(ScriptedConnection())
        let stream = MastodonUserStream(
            engine: fixture.engine, connector: script.connector, clock: fixture.clock,
            backoff: Backoff(base: .seconds(1), cap: .seconds(60), random: { 0.5 }))
        var states = stream.stateChanges().makeAsyncIterator()
        var changes = fixture.engine.changes().makeAsyncIterator()
        await stream.start()
        _ = await Self.next(&states) { $0 == .open }
        first.continuation.finish(throwing: WebSocketError.connectionLost)
        _ = await Self.next(&states) { if case .waiting = $0 { true } else { false } }
        let missed = await fixture.postMany(3)
        await fixture.clock.waitForSleepers(1)
        await fixture.clock.advance(by: .seconds(60))
        _ = await Self.next(&states) { $0 == .open }
        _ = await Self.next(&changes) { if case .timeline(_, inserted: 3) = $0 { true } else { false } }
        let cached = try await fixture.cachedHome()
        #expect(Array(cached.prefix(3)) == missed.reversed())
        #expect(Set(cached).count == cached.count)
        await stream.stop()
    }

    @Test func aRefusedTokenGivesUpWithoutConnecting() async throws {
        let fixture = try await EngineFixture()
        let client = MastodonAPIClient(
            server: URL(string: "https://sandbox.invalid")!, accountKey: "alice@sandbox",
            authorization: MastodonAuthorization(token: "revoked"),
            transport: MastodonSandboxTransport(server: fixture.http))
        let engine = MastodonAccountEngine(
            client: client, store: fixture.store, capabilities: try await fixture.engine.capabilities(),
            clock: fixture.clock)
        await #expect(throws: MastodonError.unauthorized) { try await engine.refresh() }
        let script = ScriptedConnector()
        let stream = MastodonUserStream(engine: engine, connector: script.connector, clock: fixture.clock)
        var states = stream.stateChanges().makeAsyncIterator()
        await stream.start()
        #expect(
            await Self.next(&states) { if case .gaveUp = $0 { true } else { false } } == .gaveUp(.needsReauthentication)
        )
        #expect(script.attempts == 0)
    }

    @Test func aServerWithoutStreamingIsNotConnected() async throws {
        let fixture = try await EngineFixture(variant: .nextcloud)
        let script = ScriptedConnector()
        let stream = MastodonUserStream(engine: fixture.engine, connector: script.connector, clock: fixture.clock)
        var states = stream.stateChanges().makeAsyncIterator()
        await stream.start()
        #expect(await Self.next(&states) { if case .gaveUp = $0 { true } else { false } } == .gaveUp(.notOffered))
        #expect(script.attempts == 0)
    }
}
