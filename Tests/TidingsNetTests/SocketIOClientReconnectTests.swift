import Foundation
import Testing
import TidingsCore

@testable import TidingsNet

@Suite(.timeLimit(.minutes(1))) struct SocketIOClientReconnectTests {
    @Test func policyFollowsTheJavaScriptSchedule() {
        let policy = SocketIOReconnectPolicy()
        // random < 0.1 picks "minus", 0.1..<0.2 "plus" (like the JavaScript client).
        #expect(policy.delay(forAttempt: 1, random: 0) == .seconds(1))
        #expect(policy.delay(forAttempt: 1, random: 0.15) == .milliseconds(1075))
        #expect(policy.delay(forAttempt: 2, random: 0.05) == .milliseconds(1950))
        #expect(policy.delay(forAttempt: 3, random: 0) == .seconds(4))
        #expect(policy.delay(forAttempt: 4, random: 0) == .seconds(5))
        #expect(policy.delay(forAttempt: 1_000, random: 0.99) == .seconds(5))
        let plain = SocketIOReconnectPolicy(randomizationFactor: 0)
        #expect(plain.delay(forAttempt: 2, random: 0.77) == .seconds(2))
    }

    @Test func bufferedEmitsGoOutOnceAfterReconnecting() async throws {
        let clock = TestClock()
        let server = FakeSocketIOServer()
        let client = SocketIOClient(connector: server, clock: clock, random: { 0 })
        var events = client.events.makeAsyncIterator()
        try await client.connect(auth: ["k": 1])
        #expect(await events.next()?.label == "connect")

        await server.sessions[0].fail()
        #expect(await events.next()?.label == "disconnect transportError")
        try await client.emit("queued", 1)
        let acked = Task { try await client.emitWithAck("queued", 2, timeout: .seconds(30)) }
        await clock.waitForSleepers(2)
        #expect(await client.bufferedEmitCount == 2)
        #expect(await server.connectCount == 1)

        await clock.advance(by: .milliseconds(999))
        #expect(await server.connectCount == 1)
        await clock.advance(by: .milliseconds(1))
        #expect(await events.next()?.label == "reconnectAttempt 1")
        #expect(await events.next()?.label == "connect")
        await server.waitForMessages(3)
        #expect(await server.received(1) == [#"0{"k":1}"#, #"2["queued",1]"#, #"20["queued",2]"#])
        await server.push(1, "30[true]")
        #expect(try await acked.value == [true])
        #expect(await server.received(0) == [#"0{"k":1}"#])
    }

    @Test func failedAttemptsBackOffThenGiveUp() async throws {
        let clock = TestClock()
        let server = FakeSocketIOServer()
        let policy = SocketIOReconnectPolicy(randomizationFactor: 0, maximumAttempts: 3)
        let client = SocketIOClient(
            connector: server, configuration: .init(reconnectPolicy: policy), clock: clock, random: { 0 })
        var events = client.events.makeAsyncIterator()
        try await client.connect()
        _ = await events.next()
        let pending = Task { try await client.emitWithAck("later", timeout: .seconds(600)) }
        await server.waitForMessages(2)
        await server.failNextConnects(10)
        await server.sessions[0].fail()
        #expect(await events.next()?.label == "disconnect transportError")
        await #expect(throws: SocketIOError.disconnected) { try await pending.value }
        try await client.emit("buffered")

        for (attempt, delay) in [(1, 1), (2, 2), (3, 4)] {
            await clock.waitForSleepers(1)
            await clock.advance(by: .seconds(delay))
            #expect(await events.next()?.label == "reconnectAttempt \(attempt)")
            #expect(await events.next()?.label == "connectError transportFailed")
        }
        #expect(await events.next()?.label == "connectError reconnectFailed")
        #expect(await server.connectCount == 4)
        #expect(await client.bufferedEmitCount == 0)
        await #expect(throws: SocketIOError.notConnected) { try await client.emit("x") }
    }

    @Test func theSendBufferIsBoundedOrOff() async throws {
        for limit in [0, 2] {
            let clock = TestClock()
            let server = FakeSocketIOServer()
            let client = SocketIOClient(
                connector: server, configuration: .init(sendBufferLimit: limit), clock: clock, random: { 0 })
            var events = client.events.makeAsyncIterator()
            try await client.connect()
            _ = await events.next()
            await server.sessions[0].fail()
            _ = await events.next()
            if limit == 0 {
                await #expect(throws: SocketIOError.notConnected) { try await client.emit("x") }
            } else {
                try await client.emit("a")
                try await client.emit("b")
                await #expect(throws: SocketIOError.sendBufferFull) { try await client.emit("c") }
            }
            await client.disconnect()
        }
    }

    @Test func aMalformedServerPacketDropsTheConnectionAndReconnects() async throws {
        let clock = TestClock()
        let server = FakeSocketIOServer()
        let client = SocketIOClient(connector: server, clock: clock, random: { 0 })
        var events = client.events.makeAsyncIterator()
        try await client.connect()
        _ = await events.next()
        await server.push(0, "2{not json")
        #expect(await events.next()?.label == "disconnect transportError")
        await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(1))
        #expect(await events.next()?.label == "reconnectAttempt 1")
        #expect(await events.next()?.label == "connect")
        #expect(await server.sessions[0].isClosed)
    }
}
