import Foundation
import TidingsSandbox
import TidingsSandboxKit

/// `--cold-for S`: the server starts with a cold cache, as after the public server's restart.
let sandboxOpenMatesColdOption = OptionSpec.value(
    "--cold-for", "seconds",
    help: "Start with a cold cache: syncs are answered from the database (the last chat's content only) until the "
        + "re-warm ends, S seconds after the first phased sync (the real server takes about 1), with cache_primed.")

/// `tidings sandbox openmates [--port N] [--cold-for S]`: the OpenMates sandbox's WebSocket (`/v1/ws?sessionId=…`)
/// on loopback, and its offline-prefetch endpoint (`POST /v1/sync/offline-prefetch`) on the same port, as the real
/// server serves both on one origin (so `tidings openmates sync --server … --prefetch` reaches it).
let sandboxOpenMatesCommand = Command(
    name: "openmates",
    abstract: "Serve the OpenMates sample sandbox (phased sync over WebSocket) on loopback; print its URL and token.",
    options: [portOption, sandboxOpenMatesColdOption],
    validate: { parsed -> (port: Int, coldFor: Int?) in
        (try parsed.int(portOption, in: 0...65_535) ?? 0, try parsed.int(sandboxOpenMatesColdOption, in: 0...3600))
    },
    run: { options in
        let port = options.port
        let termination = TerminationSignal()
        let sandbox = OpenMatesSandboxServer()
        await sandbox.seed(parents: 24, messagesEach: 6, subChatsOfNewest: 2)
        if options.coldFor != nil {
            var variant = await sandbox.variant
            variant.coldCache = true
            await sandbox.setVariant(variant)
        }
        let rewarm = options.coldFor.map { seconds in
            Task {
                // The re-warm starts with the first sync, as the server's warming task does.
                while await !sandbox.received.contains(where: { $0.type == "phased_sync_request" }) {
                    try await Task.sleep(for: .milliseconds(20))
                }
                try await Task.sleep(for: .seconds(seconds))
                await sandbox.primeCache()
            }
        }
        let prefetch = OpenMatesSandboxPrefetchEndpoint(server: sandbox, log: printingSandboxRequestLog())
        let endpoint = try OpenMatesSandboxWebSocketServer(
            server: sandbox, port: port, log: printingSandboxRequestLog(), prefetch: prefetch)
        await serveUntilTerminated(
            termination,
            announcing: [
                "OpenMates sandbox listening on 127.0.0.1 (Ctrl-C to stop).",
                "url: \(endpoint.origin.absoluteString)/v1/ws?sessionId=<any session id>&token=<token>",
                "token: \(sandbox.token) (the sandbox's public demo token, never secret)",
                "chats: \(await sandbox.chats.count) (24 parents, 2 sub-chats)"
                    + (options.coldFor.map { "; cache cold until \($0) s after the first sync" } ?? ""),
                "prefetch: POST http://127.0.0.1:\(endpoint.port)/v1/sync/offline-prefetch with "
                    + "'Cookie: auth_refresh_token=<token>' and {\"cursor\":10,\"limit\":3}",
                "connect: put the token in the URL's query (as above) or send 'Cookie: auth_refresh_token=<token>' "
                    + "with the WebSocket upgrade, then {\"type\":\"phased_sync_request\",\"payload\":{\"phase\":\"all\",…}}",
            ]
        ) {
            rewarm?.cancel()
            endpoint.stop()
        }
    }
)
