import Foundation
import TidingsSandbox
import TidingsSandboxKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

private let webPushFlag = OptionSpec.flag(
    "--web-push", help: "Start with Web Push enabled by the administrator (default: off, answers WEBPUSH_DISABLED).")
private let noProxyFlag = OptionSpec.flag(
    "--no-proxy-push", help: "Start without proxy push (no 'devices' capability), as a server without it.")

/// `tidings sandbox nextcloud [--port N] [--web-push] [--no-proxy-push]`: the Nextcloud push sandbox (capabilities,
/// proxy registration with its push-proxy stand-in, Web Push, the Social app's notifications) on loopback.
let sandboxNextcloudCommand = Command(
    name: "nextcloud",
    abstract: "Serve the Nextcloud push sandbox (proxy push, Web Push, Social notifications) on loopback.",
    options: [portOption, webPushFlag, noProxyFlag],
    validate: { parsed -> (port: Int, webPush: Bool, proxy: Bool) in
        (try parsed.int(portOption, in: 0...65_535) ?? 0, parsed.flag(webPushFlag), !parsed.flag(noProxyFlag))
    },
    run: { options in
        let termination = TerminationSignal()
        // Each push as it leaves: where to (host and port only: a push endpoint's path is a capability) and the
        // receiver's answer.
        let console = Console.current
        let sandbox = try NextcloudSandboxServer(
            log: printingSandboxRequestLog(),
            onDelivery: { delivery in
                let target = "\(delivery.endpoint.host ?? "?"):\(delivery.endpoint.port.map(String.init) ?? "-")"
                let outcome = delivery.status.map { "HTTP \($0)" } ?? "failed: \(delivery.failure ?? "no answer")"
                console.writeOutput("pushed: \(delivery.notificationID) to \(target): \(outcome)\n")
                fflush(nil)
            })
        await sandbox.setSwitches(push: options.proxy, webPush: options.webPush)
        let listener = try sandbox.http.serve(port: options.port)
        let base =
            listener.url.absoluteString.hasSuffix("/")
            ? String(listener.url.absoluteString.dropLast()) : listener.url.absoluteString
        await serveUntilTerminated(
            termination,
            announcing: [
                "Nextcloud sandbox listening on 127.0.0.1 (Ctrl-C to stop).",
                "url: \(base)",
                "user: \(sandbox.user)",
                "app password: \(sandbox.appPassword) (the sandbox's public demo value, never secret)",
                "proxy push: \(options.proxy ? "on" : "off"); register at /ocs/v2.php/apps/notifications/api/v2/push "
                    + "with proxyServer \(base) and an http URL as the push token: pushes are POSTed there",
                "web push: \(options.webPush ? "on" : "off (WEBPUSH_DISABLED)"); VAPID key \(sandbox.vapidPublicKey)",
                "notify: POST \(base)/sandbox/notifications {\"app\": \"social\", \"subject\": \"…\"} "
                    + "(same login); DELETE \(base)/sandbox/notifications/<nid>",
                "login flow: POST \(base)/index.php/login/v2 (Login Flow v2), then press Grant access on the "
                    + "login page it names; the poll then hands out this user and app password",
                "connect: send 'Authorization: Basic <user:app password>' and 'OCS-APIRequest: true'",
            ]
        ) { listener.stop() }
    }
)
