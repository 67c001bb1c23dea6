import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsMastodon
import TidingsNet

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `tidings sandbox mastodon`, run as the real executable: a client connects with only what it printed.
@Suite(.timeLimit(.minutes(1))) struct SandboxMastodonCommandTests {
    @Test func servesMastodonUntilSIGINTAndAClientReadsWithWhatItPrinted() async throws {
        let child = try ChildProcess.spawn(
            executable: ToolRun.executable.path, arguments: ["sandbox", "mastodon", "--variant", "nextcloud"],
            standardError: .nullDevice)
        defer { child.signal(SIGKILL) }
        let (printed, complete) = try await child.readOutput(timeout: .seconds(30)) { data in
            String(decoding: data, as: UTF8.self).contains("\nconnect: ")
        }
        #expect(complete)
        let output = String(decoding: printed, as: UTF8.self)
        let values = printedFields(output)
        let url = try #require(values["url"].flatMap(URL.init(string:)))
        #expect(url.host == "127.0.0.1")
        let token = try #require(values["token alice"])

        let http = HTTPClient(configuration: .init(timeout: .seconds(20)))
        let client = MastodonAPIClient(
            server: url, accountKey: "alice@sandbox", authorization: MastodonAuthorization(token: token),
            transport: http)
        let capabilities = try await MastodonCapabilities.fetch(with: client)
        #expect(capabilities.isNextcloudSocial)
        let page = try await client.homeTimeline(MastodonPageRange(limit: 40))
        #expect(page.items.count == 40)
        #expect(page.older != nil)
        // bob followed alice, carol mentioned her, bob favourited her post; Nextcloud Social has no unread count.
        #expect(try await client.notifications(MastodonPageRange(limit: 40)).items.count == 3)
        await #expect(throws: MastodonError.notFound) { try await client.unreadCount(version1: true) }
        let stranger = MastodonAPIClient(
            server: url, accountKey: "mallory", authorization: MastodonAuthorization(token: "not-a-token"),
            transport: http)
        await #expect(throws: MastodonError.unauthorized) { try await stranger.markers() }

        child.signal(SIGINT)
        let rest = try await child.readOutput(timeout: .seconds(20)) { _ in false }
        let tail = String(decoding: rest.data, as: UTF8.self)
        #expect(tail.contains("Stopped on SIGINT."))
        let served = (output + tail).split(separator: "\n").filter { $0.hasPrefix("served: ") }
        #expect(served.count == 6)
        #expect(!(output + tail).replacingOccurrences(of: "token alice: \(token)", with: "").contains(token))
        #expect(await child.waitForExit(timeout: .seconds(20)) == .exited(0))
    }

    @Test func aBadVariantOrPortIsAUsageError() async throws {
        #expect(try await ToolRun.run(["sandbox", "mastodon", "--variant", "friendica"]).status == 64)
        #expect(try await ToolRun.run(["sandbox", "mastodon", "--port", "-1"]).status == 64)
    }
}
