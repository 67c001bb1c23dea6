import Foundation
import Testing

@testable import TidingsNet

/// Replays Tests/Fixtures/fuzz/engineio/ through the checks of the FuzzEngineIOPacket target.
@Suite(.timeLimit(.minutes(1))) struct EngineIOFuzzRegressionTests {
    @Test func engineIOInputsDecodeOrFailWithTypedErrorsAndRoundTrip() throws {
        let inputs = try SocketIOFuzzRegressionTests.fixtures("engineio")
        #expect(!inputs.isEmpty)
        for (name, bytes) in inputs {
            for version in [EngineIOVersion.v4, .v3] {
                do {
                    let packets = try EngineIOPayload.decode(bytes, version: version)
                    let again = try EngineIOPayload.decode(
                        EngineIOPayload.encode(packets, version: version), version: version)
                    #expect(again == packets, "\(name) \(version)")
                } catch {
                    #expect(error is EngineIOError, "\(name) \(version)")
                }
            }
            _ = try? EngineIOHandshake(json: String(decoding: bytes, as: UTF8.self))
        }
    }
}
