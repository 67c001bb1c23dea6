import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsMastodon
import TidingsNet
import TidingsPush

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Two real executables: `tidings push listen` prints a push that `tidings sandbox mastodon` sent because carol
/// favourited alice's post — subscribed, encrypted, VAPID-signed, POSTed and decrypted over loopback sockets.
@Suite(.timeLimit(.minutes(1))) struct SandboxMastodonPushCommandTests {
    @Test func aFavouriteIsPushedFromTheSandboxToTheListener() async throws {
        let keys = try WebPushSubscriptionKeys.generate()
        let listen = try ChildProcess.spawn(
            executable: ToolRun.executable.path,
            arguments: [
                "push", "listen", "--private-key", keys.base64URLPrivateKey, "--auth", keys.base64URLAuthSecret,
            ],
            standardInput: .pipe, standardError: .nullDevice)
        defer { listen.signal(SIGKILL) }
        let sandbox = try ChildProcess.spawn(
            executable: ToolRun.executable.path, arguments: ["sandbox", "mastodon"], standardError: .nullDevice)
        defer { sandbox.signal(SIGKILL) }
        let listening = try await listen.readOutput(timeout: .seconds(30)) {
            String(decoding: $0, as: UTF8.self).contains("public-key: ")
        }
        let serving = try await sandbox.readOutput(timeout: .seconds(30)) {
            String(decoding: $0, as: UTF8.self).contains("\nconnect: ")
        }
        let listenFields = printedFields(String(decoding: listening.data, as: UTF8.self))
        let sandboxFields = printedFields(String(decoding: serving.data, as: UTF8.self))
        let endpoint = try #require(listenFields["endpoint"].flatMap(URL.init(string:)))
        let url = try #require(sandboxFields["url"].flatMap(URL.init(string:)))
        let vapidKey = try #require(sandboxFields["push"]?.split(separator: " ").last.map(String.init))

        let http = HTTPClient(configuration: .init(timeout: .seconds(20)))
        func client(_ name: String) throws -> MastodonAPIClient {
            MastodonAPIClient(
                server: url, accountKey: "\(name)@sandbox",
                authorization: MastodonAuthorization(token: try #require(sandboxFields["token \(name)"])),
                transport: http)
        }
        let subscription = try await MastodonPushSubscriptionClient(api: try client("alice")).subscribe(
            endpoint: endpoint, keys: keys, alerts: MastodonPushAlerts(enabled: ["favourite"]), policy: .all)
        #expect(subscription.serverKey == vapidKey)
        // alice's own post, found through bob's favourite of it (the sample's interaction).
        let own = try #require(
            try await client("alice").notifications().items.compactMap(\.status).first {
                $0.content.contains("Hello from the Tidings sandbox")
            })
        _ = try await client("carol").perform(.favourite, status: own.id)

        let pushed = try await listen.readOutput(timeout: .seconds(30)) {
            String(decoding: $0, as: UTF8.self).contains("\n")
        }
        let line = String(decoding: pushed.data, as: UTF8.self)
        #expect(line.hasPrefix("push: aes128gcm, "), "\(line)")
        #expect(line.contains("VAPID http://127.0.0.1:"))
        let json = try JSONValue(parsing: Data(try #require(line.split(separator: ": ", maxSplits: 2).last).utf8))
        #expect(json["notification_type"] == .string("favourite"))
        #expect(json["title"] == .string("carol favourited your post"))

        for child in [listen, sandbox] {
            child.signal(SIGTERM)
            #expect(await child.waitForExit(timeout: .seconds(20)) == .exited(0))
        }
    }
}
