import PeerSupport
import Testing

@Suite struct PeerSupportTests {
    @Test func aMissingPeerScriptIsAClearError() {
        #expect(throws: PythonPeer.StartError.self) {
            _ = try PythonPeer.start("no-such-peer.py")
        }
    }
}
