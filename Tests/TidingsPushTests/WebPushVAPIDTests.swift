import Foundation
import Testing
import TidingsCore

@testable import TidingsPush

/// VAPID (RFC 8292) headers as the sandbox signs them and a push service checks them.
@Suite(.timeLimit(.minutes(1))) struct WebPushVAPIDTests {
    let endpoint = URL(string: "https://push.example:8443/send/abc?x=1")!
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func bothSchemesVerifyWithTheirClaims() throws {
        let key = try TidingsCrypto.P256.Signing.PrivateKey()
        for standard in [true, false] {
            let headers = try WebPushVAPID.headers(
                endpoint: endpoint, key: key, subject: "mailto:admin@example", expiry: now.addingTimeInterval(3600),
                standard: standard)
            #expect(headers.authorization.hasPrefix(standard ? "vapid t=" : "WebPush "))
            #expect((headers.cryptoKey == nil) == standard)
            let claims = try WebPushVAPID.verify(
                authorization: headers.authorization, cryptoKey: headers.cryptoKey.map { "dh=BAAA;\($0)" },
                endpoint: endpoint, now: now)
            #expect(claims.audience == "https://push.example:8443")
            #expect(claims.subject == "mailto:admin@example")
            #expect(claims.publicKey == key.publicKey.x963Representation)
            #expect(claims.expiry == now.addingTimeInterval(3600))
        }
    }

    @Test func aPushServiceRefusesWhatIsWrong() throws {
        let key = try TidingsCrypto.P256.Signing.PrivateKey()
        let good = try WebPushVAPID.headers(
            endpoint: endpoint, key: key, subject: "mailto:a@example", expiry: now.addingTimeInterval(3600),
            standard: true)
        let expired = try WebPushVAPID.headers(
            endpoint: endpoint, key: key, subject: "mailto:a@example", expiry: now.addingTimeInterval(-1),
            standard: true)
        let tooFar = try WebPushVAPID.headers(
            endpoint: endpoint, key: key, subject: "mailto:a@example", expiry: now.addingTimeInterval(25 * 3600),
            standard: true)
        let otherOrigin = try WebPushVAPID.headers(
            endpoint: URL(string: "https://push.example/send/abc")!, key: key, subject: "mailto:a@example",
            expiry: now.addingTimeInterval(3600), standard: true)
        let otherKey = try TidingsCrypto.P256.Signing.PrivateKey()
        let swappedKey = good.authorization.replacingOccurrences(
            of: WebPushBase64URL.encode(key.publicKey.x963Representation),
            with: WebPushBase64URL.encode(otherKey.publicKey.x963Representation))
        var tampered = Array(good.authorization)
        tampered[20] = tampered[20] == "A" ? "B" : "A"
        for authorization in [
            nil, "Bearer x", expired.authorization, tooFar.authorization, otherOrigin.authorization, swappedKey,
            String(tampered), "vapid t=a.b.c, k=\(WebPushBase64URL.encode(key.publicKey.x963Representation))",
        ] as [String?] {
            #expect(throws: WebPushError.invalidParameter, "\(String(describing: authorization))") {
                try WebPushVAPID.verify(authorization: authorization, cryptoKey: nil, endpoint: endpoint, now: now)
            }
        }
    }
}
