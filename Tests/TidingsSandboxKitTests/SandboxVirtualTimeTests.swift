import Foundation
import Testing
import TidingsCore
import TidingsNet
import TidingsSandboxKit

/// A flag one task sets and another reads.
final class Flag: Sendable {
    private let value = LockedState(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}

/// The kit's schedules (Engine.IO heartbeat, `delay` faults on upgrades) on the virtual clock.
@Suite(.timeLimit(.minutes(1))) struct SandboxVirtualTimeTests {
    private func open(_ server: SandboxSocketIOServer) async throws -> String {
        let response = await server.http.handle(
            SandboxHTTPRequest(method: "GET", target: "/socket.io/?EIO=4&transport=polling"))
        let handshake = try EngineIOHandshake(json: try EngineIOPayload.decode(response.body).first?.text ?? "")
        return handshake.sid
    }

    @Test func aSessionThatNeverAnswersPingsClosesAfterIntervalPlusTimeout() async throws {
        let clock = TestClock()
        let server = SandboxSocketIOServer(
            namespaces: ["/": .init()],
            configuration: .init(pingInterval: .seconds(10), pingTimeout: .seconds(5), clock: clock))
        let silent = try await open(server)
        let answering = try await open(server)
        #expect(await clock.waitForSleepers(2))
        await clock.advance(by: .seconds(10))
        // Both got a ping; only one answers it.
        for sid in [silent, answering] {
            let poll = await server.http.handle(
                SandboxHTTPRequest(method: "GET", target: "/socket.io/?EIO=4&transport=polling&sid=\(sid)"))
            #expect(try EngineIOPayload.decode(poll.body).map(\.kind) == [.ping])
        }
        let pong = await server.http.handle(
            SandboxHTTPRequest(
                method: "POST", target: "/socket.io/?EIO=4&transport=polling&sid=\(answering)", body: Data("3".utf8)))
        #expect(pong.status == 200)
        #expect(await clock.waitForSleepers(2))
        await clock.advance(by: .seconds(4))
        #expect(server.engine.sessionCount == 2)
        await clock.advance(by: .seconds(1))
        #expect(try await SandboxSocketIOTests.eventually { server.engine.sessionCount == 1 })
        let gone = await server.http.handle(
            SandboxHTTPRequest(method: "GET", target: "/socket.io/?EIO=4&transport=polling&sid=\(silent)"))
        #expect(gone.status == 400)
    }

    @Test func aDelayedUpgradeWaitsOnTheServersClock() async throws {
        let clock = TestClock()
        let server = try LoopbackWebSocketServer(clock: clock) { _, connection in
            do { for try await _ in connection.messages {} } catch {}
        }
        defer { server.stop() }
        server.faults.add(.delay(.seconds(3)), on: .path("/slow"), times: 1)
        let connecting = Task { try await server.connectInProcess(target: "/slow") }
        #expect(await clock.waitForSleepers(1))
        await clock.advance(by: .seconds(2))
        #expect(server.log.entries.isEmpty)
        await clock.advance(by: .seconds(1))
        let socket = try await connecting.value
        socket.close()
        #expect(server.log.entries.map(\.status) == [101])
        #expect(server.log.entries.first?.fault == "delay 3.0 seconds")
    }

    @Test func anUpgradeSocketThatNeverProbesIsCutAfterOneHeartbeatPeriod() async throws {
        let clock = TestClock()
        let server = SandboxSocketIOServer(
            namespaces: ["/": .init()],
            configuration: .init(pingInterval: .seconds(10), pingTimeout: .seconds(5), clock: clock))
        let sid = try await open(server)
        let socket = try await server.http.connectWebSocketInProcess(
            target: "/socket.io/?EIO=4&transport=websocket&sid=\(sid)")
        let ended = Flag()
        let reader = Task {
            do { for try await _ in socket.messages {} } catch {}
            ended.set()
        }
        defer { reader.cancel() }
        // The heartbeat and the upgrade's deadline both sleep.
        #expect(await clock.waitForSleepers(2))
        await clock.advance(by: .seconds(14))
        await clock.advance(by: .seconds(1))
        #expect(try await SandboxSocketIOTests.eventually { ended.isSet })
        server.http.closeInProcessConnections()
    }
}
