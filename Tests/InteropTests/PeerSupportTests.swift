import PeerSupport
import Testing

@Suite struct PeerSupportTests {
    @Test func aMissingPeerScriptIsAClearError() async {
        await #expect(throws: PythonPeer.StartError.self) {
            _ = try await PythonPeer.start("no-such-peer.py")
        }
    }
}
