import Foundation
import TidingsSandbox
import TidingsSandboxKit

/// `tidings sandbox openmates [--port N]`: the OpenMates sandbox's WebSocket (`/v1/ws?sessionId=…`) on loopback,
/// and its offline-prefetch endpoint (`POST /v1/sync/offline-prefetch`) on the same port, as the real server
/// serves both on one origin (so `tidings openmates sync --server … --prefetch` reaches it).
let sandboxOpenMatesCommand = Command(
    name: "openmates",
    abstract: "Serve the OpenMates sample sandbox (phased sync over WebSocket) on loopback; print its URL and token.",
    options: [portOption],
    validate: { parsed in try parsed.int(portOption, in: 0...65_535) ?? 0 },
    run: { port in
        let termination = TerminationSignal()
        let sandbox = OpenMatesSandboxServer()
        await sandbox.seed(parents: 24, messagesEach: 6, subChatsOfNewest: 2)
        let prefetch = OpenMatesSandboxPrefetchEndpoint(server: sandbox, log: printingSandboxRequestLog())
        let endpoint = try OpenMatesSandboxWebSocketServer(
            server: sandbox, port: port, log: printingSandboxRequestLog(), prefetch: prefetch)
        await serveUntilTerminated(
            termination,
            announcing: [
                "OpenMates sandbox listening on 127.0.0.1 (Ctrl-C to stop).",
                "url: \(endpoint.origin.absoluteString)/v1/ws?sessionId=<any session id>&token=<token>",
                "token: \(sandbox.token) (the sandbox's public demo token, never secret)",
                "chats: \(await sandbox.chats.count) (24 parents, 2 sub-chats)",
                "prefetch: POST http://127.0.0.1:\(endpoint.port)/v1/sync/offline-prefetch with "
                    + "'Cookie: auth_refresh_token=<token>' and {\"cursor\":10,\"limit\":3}",
                "connect: put the token in the URL's query (as above) or send 'Cookie: auth_refresh_token=<token>' "
                    + "with the WebSocket upgrade, then {\"type\":\"phased_sync_request\",\"payload\":{\"phase\":\"all\",…}}",
            ]
        ) {
            endpoint.stop()
        }
    }
)
