import Foundation
import Testing
import TidingsCore
import TidingsNet

@testable import TidingsMastodon

/// Seed 002 §6: the user stream pings every 30 s and has no read timeout. The scripted connectors of the other
/// stream tests skip the WebSocket configuration, so it is asserted here, on the function the real connector
/// uses.
@Suite(.timeLimit(.minutes(1)))
struct StreamConnectionConfigurationTests {
    @Test func theUserStreamPingsEveryThirtySecondsOnTheInjectedClock() {
        let clock = TestClock()
        let configuration = MastodonUserStream.webSocketConfiguration(
            headers: [("Authorization", "Bearer token")], connectTimeout: .seconds(12), tls: TLSConfiguration(),
            clock: clock)
        #expect(configuration.pingInterval == .seconds(30))
        // A peer that stops answering pings is dead within the pong timeout; that is the only liveness check
        // (TidingsNet's WebSocket has no read timeout), so it must be finite and shorter than the interval.
        #expect(configuration.pongTimeout > .zero && configuration.pongTimeout < .seconds(30))
        #expect(configuration.connectTimeout == .seconds(12))
        #expect((configuration.clock as? TestClock) === clock, "pings run on the injected clock")
        #expect(configuration.headers.map(\.name) == ["Authorization"])
        #expect(configuration.headers.map(\.value) == ["Bearer token"])
    }
}
