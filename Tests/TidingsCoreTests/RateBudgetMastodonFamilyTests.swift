import Testing

@testable import TidingsCore

@Suite(.timeLimit(.minutes(1))) struct RateBudgetMastodonFamilyTests {
    @Test(arguments: [
        ("POST", "/api/v1/media", RateLimitFamily.mediaUploads),
        ("POST", "/api/v2/media", .mediaUploads),
        ("post", "/api/v2/media", .mediaUploads),
        ("PUT", "/api/v1/media/123", .default),
        ("GET", "/api/v1/media/123", .default),
        ("POST", "/api/v2/media/", .default),
        ("POST", "/api/v2/mediaX", .default),
        ("DELETE", "/api/v1/statuses/109348718203434582", .statusDeletions),
        ("POST", "/api/v1/statuses/109348718203434582/unreblog", .statusDeletions),
        ("POST", "/api/v1/statuses/109348718203434582/reblog", .default),
        ("GET", "/api/v1/statuses/109348718203434582", .default),
        ("DELETE", "/api/v1/statuses/abc", .default),
        ("DELETE", "/api/v1/statuses/", .default),
        ("DELETE", "/api/v1/statuses/1/context", .default),
        ("POST", "/api/v1/accounts", .accountCreation),
        ("GET", "/api/v1/accounts", .default),
        ("POST", "/api/v1/accounts/1/follow", .default),
        ("GET", "/api/v1/timelines/home", .default),
        ("GET", "", .default),
    ])
    func mastodonRequestsMapToTheirFamily(method: String, path: String, family: RateLimitFamily) {
        #expect(RateLimitFamily.mastodon(method: method, path: path) == family)
    }

    @Test func aQueryStringDoesNotChangeTheFamily() {
        #expect(RateLimitFamily.mastodon(method: "POST", path: "/api/v2/media?x=1") == .mediaUploads)
        #expect(
            RateLimitFamily.mastodon(method: "DELETE", path: "/api/v1/statuses/42?delete_media=true")
                == .statusDeletions)
    }
}
