import Foundation
import PeerSupport
import Testing
import TidingsNet

/// Cookies scoped by the Public Suffix List, against the real aiohttp peer (Tests/Peers/http_peer.py) reached
/// under real public host names: a cookie for a public suffix (`co.uk`, the private-section `github.io`, a
/// `*.kawasaki.jp` wildcard) is refused and never reaches a sibling site under that suffix, a cookie for a
/// registrable domain reaches its subdomains, and a host-only cookie stays with its host.
///
/// Those names must reach 127.0.0.1 without touching the machine: the scenario runs in a child of this test
/// binary in a private mount namespace (``PrivateMountNamespace``) whose `/etc/hosts` maps them to loopback;
/// libcurl resolves through `getaddrinfo`, which reads that file first (`hosts: files ...`).
///
/// Only ``HTTPClient`` keeps cookies: Engine.IO polling (`EngineIOHTTPConnectionPool`, `URLSessionPollingHTTP`)
/// sends none and stores none, so it has no jar to test here.
@Suite(.timeLimit(.minutes(2))) struct PublicSuffixCookieInteropTests {
    static let testID = "PublicSuffixCookieInteropTests/aCookieForAPublicSuffixNeverReachesASiblingSite()"
    /// Every name the scenario uses, all on loopback inside the namespace.
    static let hostNames = [
        "example.co.uk", "shop.example.co.uk", "www.example.co.uk", "evil.co.uk", "other.co.uk",
        "app.github.io", "api.app.github.io", "evil.github.io",
        "www.city.kawasaki.jp", "mail.city.kawasaki.jp", "shop.foo.kawasaki.jp", "bar.foo.kawasaki.jp",
    ]

    @Test func aCookieForAPublicSuffixNeverReachesASiblingSite() async throws {
        if PrivateMountNamespace.isInside(running: Self.testID) {
            try await scenario()
        } else {
            let lines = Self.hostNames.map { "127.0.0.1 \($0)\n" }.joined()
            try await PrivateMountNamespace.run(
                test: Self.testID, overlays: [.init(path: "/etc/hosts", appended: Data(lines.utf8))])
        }
    }

    /// The scenario itself, where the public names resolve to loopback.
    private func scenario() async throws {
        let peer = try await PythonPeer.start("http_peer.py")
        defer { peer.stop() }
        let client = HTTPClient()

        // Each response carries one `dom-<D>=<host>; Domain=<D>` cookie per domain D and a host-only
        // `host-only=<host>`.
        try await setCookies(client, peer, from: "evil.co.uk", domains: ["co.uk", ".co.uk", "uk", "evil.co.uk"])
        try await setCookies(
            client, peer, from: "shop.example.co.uk", domains: ["co.uk", "example.co.uk", "github.io"])
        // github.io is in the list's private section: each user's site below it is a registrable domain.
        try await setCookies(
            client, peer, from: "app.github.io", domains: ["github.io", ".github.io", "app.github.io"])
        // `*.kawasaki.jp` makes foo.kawasaki.jp a public suffix; `!city.kawasaki.jp` makes city.kawasaki.jp
        // a registrable domain again.
        try await setCookies(client, peer, from: "shop.foo.kawasaki.jp", domains: ["foo.kawasaki.jp"])
        try await setCookies(client, peer, from: "www.city.kawasaki.jp", domains: ["city.kawasaki.jp"])

        // What each host received on the wire, as aiohttp saw the Cookie header.
        let expected: [String: [String: String]] = [
            // A cookie for the public suffix is not even sent back to the site that set it.
            "evil.co.uk": ["dom-evil.co.uk": "evil.co.uk", "host-only": "evil.co.uk"],
            "shop.example.co.uk": ["dom-example.co.uk": "shop.example.co.uk", "host-only": "shop.example.co.uk"],
            // The registrable domain's cookie reaches its other names; the host-only one does not.
            "www.example.co.uk": ["dom-example.co.uk": "shop.example.co.uk"],
            "example.co.uk": ["dom-example.co.uk": "shop.example.co.uk"],
            // A sibling site under the public suffix gets nothing, from evil.co.uk or from shop.example.co.uk.
            "other.co.uk": [:],
            "app.github.io": ["dom-app.github.io": "app.github.io", "host-only": "app.github.io"],
            "api.app.github.io": ["dom-app.github.io": "app.github.io"],
            "evil.github.io": [:],
            "shop.foo.kawasaki.jp": ["host-only": "shop.foo.kawasaki.jp"],
            "bar.foo.kawasaki.jp": [:],
            "www.city.kawasaki.jp": [
                "dom-city.kawasaki.jp": "www.city.kawasaki.jp", "host-only": "www.city.kawasaki.jp",
            ],
            "mail.city.kawasaki.jp": ["dom-city.kawasaki.jp": "www.city.kawasaki.jp"],
        ]
        #expect(Set(expected.keys) == Set(Self.hostNames))
        for host in Self.hostNames {
            let seen = try await cookiesSent(by: client, to: host, peer)
            #expect(seen == expected[host], "cookies sent to \(host)")
        }
        // The refused cookies were not kept either.
        let kept = Set(client.cookies.all.map(\.domain))
        #expect(kept.isDisjoint(with: ["co.uk", "uk", "github.io", "foo.kawasaki.jp"]), "\(kept)")
    }

    private func url(_ host: String, _ peer: PythonPeer, _ pathAndQuery: String) throws -> URL {
        try #require(URL(string: "http://\(host):\(peer.port)\(pathAndQuery)"))
    }

    private func setCookies(
        _ client: HTTPClient, _ peer: PythonPeer, from host: String, domains: [String]
    ) async throws {
        let query = domains.map { "domain=\($0)" }.joined(separator: "&")
        let answer = try await client.decode(
            [String: String].self, from: HTTPRequest(url: url(host, peer, "/cookies/set-domains?\(query)")))
        // The peer, not some other server, answered under that name.
        #expect(answer["host"] == "\(host):\(peer.port)")
    }

    /// The cookies the peer received from `client` on a request to `host`, parsed from the raw header.
    private func cookiesSent(by client: HTTPClient, to host: String, _ peer: PythonPeer) async throws
        -> [String: String]
    {
        let answer = try await client.decode(
            [String: String?].self, from: HTTPRequest(url: url(host, peer, "/cookies/raw")))
        #expect(answer["host"] == .some("\(host):\(peer.port)"))
        var cookies: [String: String] = [:]
        for pair in (answer["cookie"] ?? nil)?.split(separator: ";") ?? [] {
            let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            #expect(parts.count == 2 && cookies[String(parts[0])] == nil, "malformed or repeated cookie \(pair)")
            if parts.count == 2 { cookies[String(parts[0])] = String(parts[1]) }
        }
        return cookies
    }
}
