import Foundation
import Testing
import TidingsCore
import TidingsSandboxKit

/// Every fault switch, in process: what the handler's answer becomes and what the log says.
@Suite(.timeLimit(.minutes(1))) struct SandboxFaultTests {
    private func server(clock: any Clock<Duration> = ContinuousClock()) -> SandboxHTTPServer {
        SandboxHTTPServer(router: SandboxTestRoutes.router(), clock: clock)
    }

    private let ping = SandboxHTTPRequest(method: "GET", target: "/api/v1/statuses/1")

    @Test func errorStatusAppliesOnlyToItsRouteAndOnlyAsOftenAsAsked() async {
        let server = server()
        server.faults.add(.status(503), on: .path("/api/v1/", method: "GET"), times: 2)
        #expect(await server.handle(SandboxHTTPRequest(method: "GET", target: "/big")).status == 200)
        #expect(await server.handle(ping).status == 503)
        #expect(await server.handle(ping).status == 503)
        #expect(await server.handle(ping).status == 200)
        #expect(server.log.entries.map(\.status) == [200, 503, 503, 200])
        #expect(server.log.entries[1].fault == "status 503")
        #expect(server.faults.faults.rules.isEmpty)
    }

    @Test func tooManyRequestsWithAndWithoutRetryAfter() async {
        let server = server()
        server.faults.add(.tooManyRequests(retryAfterSeconds: 30), times: 1)
        server.faults.add(.tooManyRequests(retryAfterSeconds: nil), times: 1)
        let first = await server.handle(ping)
        #expect(first.status == 429)
        #expect(first.headers["Retry-After"] == "30")
        let second = await server.handle(ping)
        #expect(second.status == 429)
        #expect(second.headers["Retry-After"] == nil)
    }

    @Test func delayWaitsOnTheServersClock() async {
        let clock = TestClock()
        let server = server(clock: clock)
        server.faults.add(.delay(.seconds(5)), times: 1)
        let answer = Task { await server.handle(ping).status }
        #expect(await clock.waitForSleepers(1))
        await clock.advance(by: .seconds(4))
        #expect(server.log.entries.isEmpty)
        await clock.advance(by: .seconds(1))
        #expect(await answer.value == 200)
        #expect(server.log.entries.first?.fault == "delay 5.0 seconds")
    }

    @Test func dropMidResponseKeepsHalfTheBody() async {
        let server = server()
        server.faults.add(.dropMidResponse, times: 1)
        let response = await server.handle(SandboxHTTPRequest(method: "GET", target: "/big"))
        #expect(response.connectionFault == .dropAfterBodyBytes(5_000))
        #expect(server.log.entries.first?.status == 0)
        #expect(server.log.entries.first?.bytesOut == 5_000)
    }

    @Test func neverAnswerHoldsTheRequestUntilTheCallerGivesUp() async {
        let server = server()
        server.faults.add(.neverAnswer, times: 1)
        let held = Task { await server.handle(ping) }
        // The request stays unanswered however long we look; only cancelling ends it.
        for _ in 0..<100 { await Task.yield() }
        #expect(server.log.entries.isEmpty)
        held.cancel()
        #expect(await held.value.connectionFault == .closeWithoutAnswer)
        #expect(server.log.entries.first?.fault == "never answer")
    }

    @Test func closeAndMalformedBody() async {
        let server = server()
        server.faults.add(.close(code: 1011), times: 1)
        server.faults.add(.malformedBody, times: 1)
        #expect(await server.handle(ping).connectionFault == .closeWithoutAnswer)
        let malformed = await server.handle(ping)
        #expect(malformed.status == 200)
        #expect(malformed.headers["Content-Type"] == "application/json")
        #expect((try? JSONSerialization.jsonObject(with: malformed.payload)) == nil)
    }

    @Test func rulesMatchEventsSeparatelyFromPaths() {
        var faults = SandboxFaults()
        faults.add(.status(500), on: .event("message"), times: 1)
        #expect(faults.take(method: "GET", path: "/message") == nil)
        #expect(faults.take(event: "other") == nil)
        #expect(faults.take(event: "message") == .status(500))
        #expect(faults.take(event: "message") == nil)
    }
}
