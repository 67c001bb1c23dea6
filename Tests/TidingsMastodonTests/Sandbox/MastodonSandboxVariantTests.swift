import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsNet
import TidingsSandbox
import TidingsSandboxKit

/// The API client against the sandbox's server variants, in process.
@Suite(.timeLimit(.minutes(1)))
struct MastodonSandboxVariantTests {
    static var idVariants: [MastodonSandboxVariant] {
        var short = MastodonSandboxVariant()
        short.idStyle = .snowflake(digits: 3)  // 950…999, then 1000…: lengths differ mid-timeline
        return [.mastodon, short, .goToSocial, .pleroma, .nextcloud]
    }

    @Test(arguments: idVariants)
    func pagingBackByLinkReachesEveryStatusInOrder(variant: MastodonSandboxVariant) async throws {
        let fixture = await MastodonSandboxFixture(variant: variant)
        let posted = await fixture.postMany(95)
        let result = try await pageToTheEnd(fixture.client(), limit: 40)
        #expect(result.ids == Array(posted.reversed()))
        #expect(result.ids == result.ids.sorted(by: >))
        #expect(result.requests == 3)
    }

    @Test func filteredPagesEndOnlyWhereLinkSays() async throws {
        var variant = MastodonSandboxVariant()
        variant.filtersPages = true
        let fixture = await MastodonSandboxFixture(variant: variant)
        let posted = await fixture.postMany(95)
        let result = try await pageToTheEnd(fixture.client(), limit: 40)
        // Every page is short, yet paging goes on to the oldest status.
        #expect(result.shortPagesWithMore == 2)
        #expect(result.requests == 3)
        #expect(result.ids.last == posted.first)
        #expect(Set(result.ids).isSubset(of: Set(posted)))
    }

    @Test func minIDFetchesTheOldestNewerPageAndFeedCapEndsHistory() async throws {
        var variant = MastodonSandboxVariant()
        variant.feedCap = 60
        let fixture = await MastodonSandboxFixture(variant: variant)
        let client = fixture.client()
        let first = await fixture.postMany(10)
        let newest = try await client.homeTimeline(MastodonPageRange(limit: 40)).items.first?.id
        #expect(newest == first.last)
        let later = await fixture.postMany(50)
        let forward = try await client.homeTimeline(MastodonPageRange(minID: newest, limit: 40))
        // The 40 statuses right after the newest cached one, newest first: a full page, so a gap remains above.
        #expect(forward.items.map(\.id) == Array(later.prefix(40).reversed()))
        #expect(forward.newer?.minID == later[39])
        // Only 60 entries are kept: paging back ends after them even though older statuses exist.
        let all = try await pageToTheEnd(client, limit: 40)
        #expect(all.ids.count == 60)
    }

    @Test func versionOneOnlyServersFallBack() async throws {
        let pleroma = await MastodonSandboxFixture(variant: .pleroma)
        let capabilities = try await MastodonCapabilities.fetch(with: pleroma.client())
        #expect(capabilities.source == .version1)
        #expect(!capabilities.supportsStatusesByID)
        #expect(capabilities.offersStreaming)
        await #expect(throws: MastodonError.notFound) { try await pleroma.client().unreadCount() }
        #expect(try await pleroma.client(token: "bob-token").unreadCount(version1: true) == 1)  // alice followed bob

        let mastodon = await MastodonSandboxFixture()
        let stock = try await MastodonCapabilities.fetch(with: mastodon.client())
        #expect(stock.source == .version2)
        #expect(stock.supportsStatusesByID)
        #expect(stock.offersWebPush)
    }

    @Test func nextcloudSocialMode() async throws {
        let fixture = await MastodonSandboxFixture(variant: .nextcloud)
        let client = fixture.client()
        let capabilities = try await MastodonCapabilities.fetch(with: client)
        #expect(capabilities.isNextcloudSocial)
        #expect(!capabilities.offersStreaming && !capabilities.offersWebPush)
        #expect(capabilities.maximumPageLimit == 50)
        _ = await fixture.postMany(70)
        #expect(try await client.homeTimeline(MastodonPageRange(limit: 80)).items.count == 50)
        await #expect(throws: MastodonError.badRequest) { try await client.homeTimeline(MastodonPageRange(limit: 0)) }
        let raw = await fixture.http.handle(
            SandboxHTTPRequest(
                method: "GET", target: "/api/v1/timelines/home", headers: ["Authorization": "Bearer alice-token"]))
        #expect(raw.headers["ETag"] == nil)
        let stock = await MastodonSandboxFixture().http.handle(
            SandboxHTTPRequest(
                method: "GET", target: "/api/v1/timelines/home", headers: ["Authorization": "Bearer alice-token"]))
        #expect(stock.headers["ETag"] != nil)
    }

    @Test func sparseFieldsStillDecode() async throws {
        var variant = MastodonSandboxVariant()
        variant.sparseFields = true
        let fixture = await MastodonSandboxFixture(variant: variant)
        _ = await fixture.postMany(3)
        let page = try await fixture.client().homeTimeline()
        #expect(page.items.count == 3)
        #expect(page.skipped == 0)
        #expect(page.items.allSatisfy { $0.account?.avatar == nil && $0.favourited == nil })
    }
}
