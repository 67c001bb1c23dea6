import Foundation
import PeerSupport
import Testing
import TidingsNet

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An https → http redirect against the real aiohttp peer (Tests/Peers/http_peer.py over TLS): the policy of
/// ``HTTPClient`` is that a hop which changes the scheme loses `Authorization`, while the redirect itself is
/// followed (nothing in the policy refuses a downgrade).
///
/// URLSession on Linux (swift-corelibs-foundation over libcurl) cannot be told to trust a test CA: its only
/// switch, the `URLSessionCertificateAuthorityInfoFile` environment variable, is compiled for Android alone,
/// and Debian's libcurl 7.88 reads its CA bundle from a fixed path (`/etc/ssl/certs/ca-certificates.crt`)
/// with no environment override. So the scenario runs in a child copy of this test process inside a private
/// mount namespace (``PrivateMountNamespace``), where that path shows the system bundle plus
/// `Tests/Fixtures/tls/ca.pem`; the machine's trust store is never changed.
@Suite(.timeLimit(.minutes(2))) struct HTTPSDowngradeRedirectInteropTests {
    static let testID = "HTTPSDowngradeRedirectInteropTests/theBearerTokenDoesNotFollowAnHTTPSToHTTPRedirect()"
    static let tlsFolder = PythonPeer.projectRoot.appendingPathComponent("Tests/Fixtures/tls")
    static let systemBundle = "/etc/ssl/certs/ca-certificates.crt"

    private static func httpsPeer() async throws -> PythonPeer {
        try await PythonPeer.start(
            "http_peer.py",
            arguments: [
                "--tls-cert", tlsFolder.appendingPathComponent("server.pem").path,
                "--tls-key", tlsFolder.appendingPathComponent("server.key").path,
            ])
    }

    @Test func theBearerTokenDoesNotFollowAnHTTPSToHTTPRedirect() async throws {
        if PrivateMountNamespace.isInside(running: Self.testID) {
            try await downgradeScenario()
        } else {
            try await runInsideMountNamespace(test: Self.testID)
        }
    }

    /// The scenario itself, where curl trusts the test CA.
    private func downgradeScenario() async throws {
        let secure = try await Self.httpsPeer()
        let plain = try await PythonPeer.start("http_peer.py")
        defer {
            secure.stop()
            plain.stop()
        }
        let client = HTTPClient()
        let home = URL(string: "https://127.0.0.1:\(secure.port)/headers")!
        // Control: over https to the same origin the token is sent, so the TLS trust works and the header is real.
        let direct = try await client.decode(
            [String: String?].self, from: HTTPRequest(url: home, bearerToken: "t0k-https-only"))
        #expect(direct["authorization"] == "Bearer t0k-https-only")

        let redirect = URL(string: "https://127.0.0.1:\(secure.port)/redirect-to-port?port=\(plain.port)")!
        let response = try await client.send(HTTPRequest(url: redirect, bearerToken: "t0k-https-only"))
        // The downgrade is followed: the plain peer answered ...
        #expect(response.status == 200)
        #expect(response.url.absoluteString == "http://127.0.0.1:\(plain.port)/headers")
        // ... and received no Authorization: the token never crossed the wire in clear.
        let seen = try JSONDecoder().decode([String: String?].self, from: response.body)
        #expect(seen["authorization"] == .some(nil))
        #expect(seen["user_agent"] != nil, "not the /headers answer")
    }

    /// Runs this test again in a child of this test binary, in a mount namespace whose CA bundle also trusts the
    /// test CA; the child's outcome is this test's.
    private func runInsideMountNamespace(test: String) async throws {
        // Outside the namespace the test CA is not trusted: verification is on, so the child is needed.
        let secure = try await Self.httpsPeer()
        defer { secure.stop() }
        await #expect(throws: HTTPError.self) {
            _ = try await HTTPClient().send(HTTPRequest(url: URL(string: "https://127.0.0.1:\(secure.port)/headers")!))
        }
        let testCA = try Data(contentsOf: Self.tlsFolder.appendingPathComponent("ca.pem"))
        try await PrivateMountNamespace.run(
            test: test, overlays: [.init(path: Self.systemBundle, appended: testCA)])
    }
}
