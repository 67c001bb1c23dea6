import Foundation
import Testing
import TidingsCore
import TidingsNet

@testable import TidingsMastodon

/// The API client against a scripted server: what it sends, how it reads `Link`, and how each error
/// status becomes a typed error.
@Suite(.timeLimit(.minutes(1)))
struct MastodonAPIClientTests {
    @Test func tokenOnlyInTheHeaderAndPagingParametersInTheQuery() async throws {
        let transport = ScriptedTransport { _ in (200, [:], #"[{"id":"5"},{"id":"4"}]"#) }
        let client = transport.client()
        _ = try await client.homeTimeline(MastodonPageRange(minID: "3", limit: 40))
        let request = try #require(transport.requests.first)
        #expect(request.bearerToken == "secret-token")
        #expect(!request.url.absoluteString.contains("secret-token"))
        #expect(request.url.path == "/api/v1/timelines/home")
        #expect(request.queryItems.map { "\($0.name)=\($0.value ?? "")" } == ["min_id=3", "limit=40"])
        #expect(request.rateLimitAccount == "alice@social.example")
        #expect(!"\(client.authorization)".contains("secret-token"))
    }

    @Test func linkHeaderGivesTheOlderAndNewerRangesEvenOnAShortPage() async throws {
        let link =
            #"<https://social.example/api/v1/timelines/home?limit=40&max_id=0100>; rel="next", <https://social.example/api/v1/timelines/home?limit=40&min_id=0200>; rel="prev""#
        let transport = ScriptedTransport { _ in (200, ["Link": link], #"[{"id":"0200"},{"id":"0100"}]"#) }
        let page = try await transport.client().homeTimeline(MastodonPageRange(limit: 40))
        // Two items for a limit of 40, yet the server says there is more: only Link tells the end.
        #expect(page.items.count == 2)
        #expect(page.older == MastodonPageRange(maxID: "0100", limit: 40))
        #expect(page.newer == MastodonPageRange(minID: "0200", limit: 40))

        let last = try await ScriptedTransport { _ in (200, [:], "[]") }.client().homeTimeline()
        #expect(last.older == nil)
        #expect(last.newer == nil)
    }

    @Test func unauthorizedMovesTheAccountToNeedsReauthenticationAndStopsRequests() async throws {
        let transport = ScriptedTransport { request in
            request.bearerToken == "fresh"
                ? (200, [:], #"{"count":3}"#) : (401, [:], #"{"error":"The access token is invalid"}"#)
        }
        let client = transport.client(token: "stale")
        let changes = client.authorization.changes()
        await #expect(throws: MastodonError.unauthorized) { try await client.unreadCount() }
        #expect(client.authorization.authState == .needsReauthentication)
        await #expect(throws: MastodonError.needsReauthentication) { try await client.homeTimeline() }
        await #expect(throws: MastodonError.needsReauthentication) { try await client.markers() }
        #expect(transport.requests.count == 1)

        client.authorization.signIn(token: "fresh")
        #expect(try await client.unreadCount() == 3)
        #expect(transport.requests.count == 2)
        var iterator = changes.makeAsyncIterator()
        #expect(await iterator.next() == .changed(.needsReauthentication))
        #expect(await iterator.next() == .changed(.signedIn))
    }

    @Test func errorStatusesBecomeTypedErrors() async throws {
        let transport = ScriptedTransport { request in
            switch request.url.path {
            case "/api/v1/statuses/gone": (404, [:], #"{"error":"Record not found"}"#)
            case "/api/v1/markers": (409, [:], #"{"error":"Conflict during update"}"#)
            case "/api/v1/timelines/public": (400, [:], #"{"error":"limit"}"#)
            case "/api/v1/notifications": (503, [:], "")
            default: (200, [:], "<html>not json</html>")
            }
        }
        let client = transport.client()
        await #expect(throws: MastodonError.notFound) { try await client.status(id: "gone") }
        await #expect(throws: MastodonError.conflict) { try await client.saveMarkers(home: "7") }
        await #expect(throws: MastodonError.badRequest) { try await client.publicTimeline() }
        await #expect(throws: MastodonError.server) { try await client.notifications() }
        await #expect(throws: MastodonError.decoding) { try await client.homeTimeline() }
        #expect(client.authorization.authState == .signedIn)
    }

    @Test func anIDCannotAddPathSegments() async throws {
        let transport = ScriptedTransport { _ in (200, [:], #"{"id":"x"}"#) }
        _ = try await transport.client().perform(.favourite, status: "../../admin?x=1")
        let path = try #require(transport.requests.first?.url.path)
        #expect(path.hasPrefix("/api/v1/statuses/"))
        #expect(path.hasSuffix("/favourite"))
        #expect(transport.requests.first?.url.query == nil)
    }

    @Test func statusesByIDAreAskedInBatchesOfTwenty() async throws {
        let transport = ScriptedTransport { request in
            // The server answers only the even IDs: the odd ones were deleted.
            let ids = request.queryItems.filter { $0.name == "id[]" }.compactMap(\.value)
            let body = ids.filter { (Int($0) ?? 1) % 2 == 0 }.map { #"{"id":"\#($0)"}"# }.joined(separator: ",")
            return (200, [:], "[\(body)]")
        }
        let ids = (1...45).map { ServerID(String($0)) }
        let found = try await transport.client().statuses(ids: ids)
        #expect(transport.requests.count == 3)
        #expect(transport.requests.map { $0.queryItems.count } == [20, 20, 5])
        #expect(found.map(\.id) == ids.filter { Int($0.rawValue)! % 2 == 0 })
    }

    @Test func actionsAndMarkersSendWhatMastodonExpects() async throws {
        let transport = ScriptedTransport { request in
            if request.url.path.hasPrefix("/api/v1/accounts/") { return (200, [:], #"{"id":"9","following":true}"#) }
            if request.url.path == "/api/v1/markers" {
                return (200, [:], #"{"home":{"last_read_id":"12","version":3,"updated_at":"2024-01-01T00:00:00Z"}}"#)
            }
            return (200, [:], #"{"id":"1","favourited":true}"#)
        }
        let client = transport.client()
        for action in MastodonAPIClient.StatusAction.allCases {
            _ = try await client.perform(action, status: "1")
        }
        #expect(try await client.setFollowing(true, account: "9"))
        let markers = try await client.saveMarkers(home: "12")
        #expect(markers.home?.version == 3)
        let sent = transport.requests
        let count = MastodonAPIClient.StatusAction.allCases.count
        #expect(sent.allSatisfy { $0.method == .post })
        #expect(
            sent.prefix(count).map { $0.url.lastPathComponent }
                == MastodonAPIClient.StatusAction.allCases.map(\.rawValue))
        #expect(sent[count].url.path == "/api/v1/accounts/9/follow")
        #expect(String(decoding: sent[count + 1].body ?? Data(), as: UTF8.self).contains("home%5Blast_read_id%5D=12"))
        // An unreblog is metered in Mastodon's status-deletion family.
        #expect(sent[3].rateLimitFamily == .statusDeletions)
    }
}
