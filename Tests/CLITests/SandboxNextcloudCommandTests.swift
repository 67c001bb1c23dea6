import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsNet
import TidingsPush
import TidingsSandbox

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `tidings sandbox nextcloud`, run as the real executable: with only what it printed, a device registers for
/// proxy pushes (server, then the proxy stand-in) and a notification made through the control endpoint reaches
/// this process's loopback receiver, signed and encrypted for the device.
@Suite(.timeLimit(.minutes(1))) struct SandboxNextcloudCommandTests {
    @Test func servesNextcloudUntilSIGINTAndAPushReachesTheDevice() async throws {
        let child = try ChildProcess.spawn(
            executable: ToolRun.executable.path, arguments: ["sandbox", "nextcloud", "--web-push"],
            standardError: .nullDevice)
        defer { child.signal(SIGKILL) }
        let (printed, complete) = try await child.readOutput(timeout: .seconds(30)) { data in
            String(decoding: data, as: UTF8.self).contains("\nconnect: ")
        }
        #expect(complete)
        let output = String(decoding: printed, as: UTF8.self)
        func value(_ prefix: String) throws -> String {
            let line = try #require(output.split(separator: "\n").first { $0.hasPrefix(prefix) })
            return String(line.dropFirst(prefix.count).prefix { $0 != " " && $0 != ";" })
        }
        let url = try #require(URL(string: try value("url: ")))
        let credentials = NextcloudCredentials(user: try value("user: "), appPassword: try value("app password: "))
        let client = HTTPClient()
        let send: @Sendable (HTTPRequest) async throws -> HTTPResponse = { try await client.response(for: $0) }

        let state = await NextcloudConnection(serverURL: url, credentials: credentials, send: send).connect()
        guard case .connected(let capabilities) = state else {
            Issue.record("not connected: \(state)")
            return
        }
        #expect(capabilities.supportsProxy && capabilities.supportsWebPush)
        let vapid = try await NextcloudWebPushRegistrar(serverURL: url, credentials: credentials, send: send)
            .vapidKey()
        #expect(output.contains("VAPID key \(vapid)"))

        let receiver = NextcloudSandboxPushReceiver()
        let receiverListener = try receiver.httpServer().serve()
        defer { receiverListener.stop() }
        receiver.register(device: "cli")
        let deviceKey = try await onDedicatedThread("device key") { try NextcloudDeviceKey() }
        let registration = try await NextcloudProxyRegistrar(serverURL: url, credentials: credentials, send: send)
            .register(
                pushToken: NextcloudSandboxPushReceiver.pushToken(device: "cli", port: receiverListener.port),
                deviceKey: deviceKey, proxyServer: url)

        var notify = HTTPRequest(
            method: .post, url: url.appendingPathComponent("sandbox/notifications"),
            body: Data(#"{"app":"spreed","subject":"Bob mentioned you"}"#.utf8))
        notify.headers["Authorization"] =
            "Basic "
            + Data("\(credentials.user):\(credentials.appPassword)".utf8)
            .base64EncodedString()
        notify.headers["Content-Type"] = "application/json"
        let created = try await send(notify)
        #expect(created.status == 201)
        let nid = try #require(try JSONValue(parsing: created.body)["nid"]?.intValue)
        let push = try #require(await receiver.pushes(count: 1).first)
        let subject = try NextcloudProxyPushDecryptor(
            deviceKey: deviceKey.privateKey,
            userPublicKey: try TidingsCrypto.RSA.PublicKey(pemRepresentation: registration.userPublicKey)
        ).open(messageJSON: push.body)
        #expect(
            subject == .notification(nid: Int64(nid), app: "spreed", subject: "Bob mentioned you", type: nil, id: nil))

        child.signal(SIGINT)
        let tail = String(
            decoding: try await child.readOutput(timeout: .seconds(20)) { _ in false }.data, as: UTF8.self)
        #expect(tail.contains("Stopped on SIGINT."))
        let served = (output + tail).split(separator: "\n").filter { $0.hasPrefix("served: ") }
        #expect(served.contains { $0.contains("POST /devices") })
        #expect(served.contains { $0.contains("POST /sandbox/notifications") })
        #expect((output + tail).contains("pushed: \(nid) to 127.0.0.1:\(receiverListener.port): HTTP 200"))
        #expect(await child.waitForExit(timeout: .seconds(20)) == .exited(0))
    }

    @Test func aBadPortOrOptionIsAUsageError() async throws {
        #expect(try await ToolRun.run(["sandbox", "nextcloud", "--port", "70000"]).status == 64)
        #expect(try await ToolRun.run(["sandbox", "nextcloud", "--bogus"]).status == 64)
    }
}
