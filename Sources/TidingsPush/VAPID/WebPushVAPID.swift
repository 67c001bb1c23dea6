import Foundation
import TidingsCore

/// VAPID (RFC 8292): how an application server identifies itself to a push service — an ES256-signed JWT naming
/// the push service's origin (`aud`), an expiry (`exp`, at most 24 hours ahead) and a contact (`sub`), sent as
/// `Authorization: vapid t=<jwt>, k=<public key>` (the legacy `aesgcm` form: `Authorization: WebPush <jwt>` with
/// `p256ecdsa=<public key>` in `Crypto-Key`).
public enum WebPushVAPID {
    /// The headers that sign one request to `endpoint`.
    ///
    /// - Parameters:
    ///   - endpoint: The subscription's endpoint; its origin is the JWT's `aud`.
    ///   - key: The server's VAPID signing key.
    ///   - subject: A contact for the push service (`mailto:` or `https:`), the JWT's `sub`.
    ///   - expiry: The JWT's `exp` (a push service refuses more than 24 hours ahead).
    ///   - standard: RFC 8292's `vapid` scheme when true; the legacy `WebPush` scheme (and a `Crypto-Key`
    ///     `p256ecdsa` parameter) when false, as Mastodon sends with `aesgcm`.
    /// - Throws: ``WebPushError/invalidParameter`` when `endpoint` has no origin; ``WebPushError/platformFailure``
    ///   when signing fails.
    public static func headers(
        endpoint: URL, key: TidingsCrypto.P256.Signing.PrivateKey, subject: String, expiry: Date, standard: Bool
    ) throws(WebPushError) -> (authorization: String, cryptoKey: String?) {
        guard let origin = origin(of: endpoint) else {
            throw .with(.invalidParameter, "push endpoint has no origin")
        }
        let header = WebPushBase64URL.encode(Array(#"{"typ":"JWT","alg":"ES256"}"#.utf8))
        let claims: JSONValue = .object([
            "aud": .string(origin), "exp": .int(Int64(expiry.timeIntervalSince1970)), "sub": .string(subject),
        ])
        let body = WebPushBase64URL.encode([UInt8](claims.jsonData(sortedKeys: true)))
        let signingInput = "\(header).\(body)"
        let signature: [UInt8]
        do {
            signature = try key.signature(for: Array(signingInput.utf8))
        } catch {
            throw .with(.platformFailure, "\(error)")
        }
        let token = "\(signingInput).\(WebPushBase64URL.encode(signature))"
        let publicKey = WebPushBase64URL.encode(key.publicKey.x963Representation)
        if standard { return ("vapid t=\(token), k=\(publicKey)", nil) }
        return ("WebPush \(token)", "p256ecdsa=\(publicKey)")
    }

    /// What a push service learns from a valid VAPID header: who signed and until when.
    public struct Claims: Sendable, Equatable {
        /// The signer's public key (65 bytes).
        public let publicKey: [UInt8]
        /// The `aud` claim.
        public let audience: String
        /// The `sub` claim, when present.
        public let subject: String?
        /// The `exp` claim.
        public let expiry: Date
    }

    /// Checks a request's VAPID headers as a push service does: the JWT's ES256 signature under the key it names,
    /// `aud` equal to the endpoint's origin, `exp` in the future and at most 24 hours ahead of `now`.
    ///
    /// - Throws: ``WebPushError/invalidParameter`` naming what is wrong (never the token itself).
    public static func verify(authorization: String?, cryptoKey: String?, endpoint: URL, now: Date)
        throws(WebPushError) -> Claims
    {
        guard let authorization else { throw .with(.invalidParameter, "no Authorization header") }
        var token: Substring?
        var keyText: Substring?
        if authorization.lowercased().hasPrefix("vapid ") {
            for part in authorization.dropFirst(6).split(separator: ",") {
                let pair = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
                guard pair.count == 2 else { continue }
                if pair[0] == "t" { token = pair[1] } else if pair[0] == "k" { keyText = pair[1] }
            }
        } else if authorization.lowercased().hasPrefix("webpush ") {
            token = Substring(authorization.dropFirst(8).trimmingCharacters(in: .whitespaces))
            for part in (cryptoKey ?? "").split(whereSeparator: { $0 == ";" || $0 == "," }) {
                let pair = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
                if pair.count == 2, pair[0] == "p256ecdsa" { keyText = pair[1] }
            }
        }
        guard let token, let keyText else { throw .with(.invalidParameter, "not a VAPID Authorization") }
        let publicKeyBytes = try WebPushBase64URL.decode(String(keyText), what: "VAPID key")
        let publicKey: TidingsCrypto.P256.Signing.PublicKey
        do {
            publicKey = try TidingsCrypto.P256.Signing.PublicKey(x963Representation: publicKeyBytes)
        } catch {
            throw .with(.invalidParameter, "VAPID key is not a P-256 point")
        }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .with(.invalidParameter, "VAPID token is not a JWT") }
        let signature = try WebPushBase64URL.decode(String(parts[2]), what: "VAPID signature")
        guard publicKey.isValidSignature(signature, for: Array("\(parts[0]).\(parts[1])".utf8)) else {
            throw .with(.invalidParameter, "VAPID signature does not verify")
        }
        let header = try? JSONValue(parsing: Data(WebPushBase64URL.decode(String(parts[0]), what: "VAPID header")))
        guard header?["alg"] == .string("ES256") else { throw .with(.invalidParameter, "VAPID alg is not ES256") }
        let claimBytes = try WebPushBase64URL.decode(String(parts[1]), what: "VAPID claims")
        guard let claims = try? JSONValue(parsing: Data(claimBytes)), case .string(let audience)? = claims["aud"],
            let expiry = claims["exp"]?.intValue
        else { throw .with(.invalidParameter, "VAPID claims lack aud or exp") }
        guard audience == origin(of: endpoint) else { throw .with(.invalidParameter, "VAPID aud is another origin") }
        let expires = Date(timeIntervalSince1970: TimeInterval(expiry))
        guard expires > now, expires.timeIntervalSince(now) <= 24 * 3600 else {
            throw .with(.invalidParameter, "VAPID exp is past or more than 24 hours ahead")
        }
        var subject: String?
        if case .string(let text)? = claims["sub"] { subject = text }
        return Claims(publicKey: publicKeyBytes, audience: audience, subject: subject, expiry: expires)
    }

    /// `scheme://host[:port]` of `url`, the `aud` a push service expects.
    static func origin(of url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
        let defaultPort = scheme == "https" ? 443 : scheme == "http" ? 80 : nil
        if let port = url.port, port != defaultPort { return "\(scheme)://\(host):\(port)" }
        return "\(scheme)://\(host)"
    }
}
