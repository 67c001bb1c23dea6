import Testing
import TidingsNet

@testable import TidingsYpChat

/// The socket's options are the Android client's (`SocketClient.kt`) and reach the Socket.IO client.
@Suite(.timeLimit(.minutes(1))) struct YpChatSocketOptionsTests {
    @Test func theDefaultsAreTheAndroidClients() {
        let options = YpChatSocketOptions()
        #expect(options.reconnects)
        #expect(options.reconnectionAttempts == nil)
        #expect(options.reconnectionDelay == .seconds(1))
        #expect(options.reconnectionDelayMax == .seconds(5))
        #expect(options.timeout == .seconds(20))
        #expect(options.transports == .pollingThenWebSocket)
        #expect(options.engineIOVersion == .v4)
        #expect(!options.socketIOConfiguration.legacyProtocol)
    }

    @Test func everyOptionReachesTheSocketIOClient() {
        var options = YpChatSocketOptions()
        options.reconnects = false
        options.reconnectionAttempts = 3
        options.reconnectionDelay = .milliseconds(250)
        options.reconnectionDelayMax = .seconds(2)
        options.timeout = .seconds(7)
        options.engineIOVersion = .v3
        let configuration = options.socketIOConfiguration
        #expect(!configuration.reconnects)
        #expect(configuration.reconnectPolicy.maximumAttempts == 3)
        #expect(configuration.reconnectPolicy.delay == .milliseconds(250))
        #expect(configuration.reconnectPolicy.maximumDelay == .seconds(2))
        #expect(configuration.connectTimeout == .seconds(7))
        #expect(configuration.legacyProtocol)
    }
}
