import Dispatch
import Foundation
import TidingsCore
import TidingsPush
import TidingsSandbox
import TidingsSandboxKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `tidings sandbox <backend>`: a backend's sandbox on loopback for an app to connect to, like a local
/// emulator. Each backend adds its own subcommand here.
let sandboxCommand = Command(
    name: "sandbox",
    abstract: "Serve a backend's sandbox on 127.0.0.1 until interrupted, for an app or simulator to connect to.",
    subcommands: [
        sandboxKecalekCommand, sandboxMastodonCommand, sandboxYpChatCommand, sandboxOpenMatesCommand,
        sandboxNextcloudCommand,
    ]
)

let portOption = OptionSpec.value("--port", "n", help: "The port on 127.0.0.1 (default: a free one).")

let sandboxKecalekCommand = Command(
    name: "kecalek",
    abstract: "Serve the Kecalek sample sandbox over a loopback WebSocket; print the URL, tokens and keys.",
    options: [portOption],
    validate: { parsed in try parsed.int(portOption, in: 0...65_535) ?? 0 },
    run: { port in
        let termination = TerminationSignal()
        let sandbox = try await KecalekSandboxServer.sample(clock: ContinuousClock())
        let endpoint = try KecalekSandboxWebSocketServer(
            server: sandbox, port: port, log: printingSandboxRequestLog())
        var lines = [
            "Kecalek sandbox listening on 127.0.0.1 (Ctrl-C to stop).",
            "url: \(endpoint.url.absoluteString)",
        ]
        for user in KecalekSandboxServer.sampleUsers {
            lines.append("token \(user): \(sandbox.token(for: user))")
        }
        lines.append("conversation keys (the sandbox's public demo keys, never secret; AES-256-GCM, hex):")
        for conversation in await sandbox.conversationIDs {
            let key = try KecalekSandboxServer.sampleKey(for: conversation)
            lines.append("key \(conversation): \(key.bytes.map { String(format: "%02x", $0) }.joined())")
        }
        lines.append(
            "connect: send 'Authorization: Bearer <token>' with the WebSocket upgrade, e.g. "
                + "tidings kecalek sync --server <url> --token <token> --key <64 hex digits> "
                + "--conversation-key general=<key>")
        await serveUntilTerminated(termination, announcing: lines) { endpoint.stop() }
    }
)

private let variantOption = OptionSpec.value(
    "--variant", "name", help: "The server to imitate: mastodon (default), gotosocial, pleroma or nextcloud.")

/// The sandbox variants `--variant` names.
private let mastodonVariants: [String: MastodonSandboxVariant] = [
    "mastodon": .mastodon, "gotosocial": .goToSocial, "pleroma": .pleroma, "nextcloud": .nextcloud,
]

let sandboxMastodonCommand = Command(
    name: "mastodon",
    abstract: "Serve the Mastodon-API sample sandbox over loopback HTTP; print the URL and tokens.",
    options: [portOption, variantOption],
    validate: { parsed -> (port: Int, variant: String) in
        let port = try parsed.int(portOption, in: 0...65_535) ?? 0
        let variant = parsed.string(variantOption) ?? "mastodon"
        guard mastodonVariants[variant] != nil else {
            throw ValidationError(
                "The value '\(variant)' is invalid for '--variant': expected mastodon, gotosocial, pleroma or nextcloud."
            )
        }
        return (port, variant)
    },
    run: { options in
        let termination = TerminationSignal()
        let sandbox = await MastodonSandboxServer.sample(variant: mastodonVariants[options.variant] ?? .mastodon)
        let listener = try sandbox.httpServer(log: printingSandboxRequestLog()).serve(port: options.port)
        var lines = [
            "Mastodon sandbox (\(options.variant)) listening on 127.0.0.1 (Ctrl-C to stop).",
            "url: \(listener.url.absoluteString)",
        ]
        for (username, token) in MastodonSandboxServer.sampleAccounts {
            lines.append("token \(username): \(token)")
        }
        // Web Push (Sources/TidingsSandbox/Push): the VAPID key is public, the server_key of every subscription.
        let vapidKey = sandbox.pushSubscriptions.serverKey.map {
            WebPushBase64URL.encode($0.publicKey.x963Representation)
        }
        lines.append(
            "push: subscribe at /api/v1/push/subscription; notifications are pushed to the endpoint, VAPID key "
                + (vapidKey ?? "unavailable"))
        lines.append(
            "connect: send 'Authorization: Bearer <token>' to the url's /api/v1 and /api/v2 endpoints "
                + "(the tokens are the sandbox's public demo tokens, never secret)")
        await serveUntilTerminated(termination, announcing: lines) { listener.stop() }
    }
)

/// SIGINT and SIGTERM caught on Dispatch signal sources, so waiting for them costs no thread of the pool.
///
/// Installed before the tool prints where it listens, so a signal sent as soon as the address is read
/// is never lost nor ends the process by its default action.
final class TerminationSignal {
    private struct State {
        var received: Int32?
        var waiter: CheckedContinuation<Int32, Never>?
    }

    private let state = LockedState(State())
    private let sources: [any DispatchSourceSignal]

    /// Turns off the default action of SIGINT and SIGTERM and starts listening for them.
    init() {
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            return DispatchSource.makeSignalSource(signal: number, queue: .global())
        }
        for (source, number) in zip(sources, [SIGINT, SIGTERM]) {
            source.setEventHandler { [weak self] in self?.deliver(number) }
            source.resume()
        }
    }

    /// Suspends until the first SIGINT or SIGTERM (at once if one already came) and returns which.
    func wait() async -> Int32 {
        await withCheckedContinuation { continuation in
            let ready: Int32? = state.withLock { state in
                if let received = state.received { return received }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    private func deliver(_ number: Int32) {
        let waiter: CheckedContinuation<Int32, Never>? = state.withLock { state in
            guard state.received == nil else { return nil }
            state.received = number
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: number)
    }

    deinit {
        for source in sources { source.cancel() }
    }
}
