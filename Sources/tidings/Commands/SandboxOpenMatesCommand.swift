import Foundation
import TidingsSandbox
import TidingsSandboxKit

/// `tidings sandbox openmates [--port N]`: the OpenMates sandbox's WebSocket (`/v1/ws?sessionId=…`) on loopback,
/// and its offline-prefetch endpoint (`POST /v1/sync/offline-prefetch`) on a second, free port.
let sandboxOpenMatesCommand = Command(
    name: "openmates",
    abstract: "Serve the OpenMates sample sandbox (phased sync over WebSocket) on loopback; print its URL and token.",
    options: [portOption],
    validate: { parsed in try parsed.int(portOption, in: 0...65_535) ?? 0 },
    run: { port in
        let termination = TerminationSignal()
        let sandbox = OpenMatesSandboxServer()
        await sandbox.seed(parents: 24, messagesEach: 6, subChatsOfNewest: 2)
        let endpoint = try OpenMatesSandboxWebSocketServer(
            server: sandbox, port: port, log: printingSandboxRequestLog())
        let prefetch = try OpenMatesSandboxPrefetchEndpoint(server: sandbox, log: printingSandboxRequestLog()).serve()
        await serveUntilTerminated(
            termination,
            announcing: [
                "OpenMates sandbox listening on 127.0.0.1 (Ctrl-C to stop).",
                "url: \(endpoint.origin.absoluteString)/v1/ws?sessionId=<any session id>&token=<token>",
                "token: \(sandbox.token) (the sandbox's public demo token, never secret)",
                "chats: \(await sandbox.chats.count) (24 parents, 2 sub-chats)",
                "prefetch: POST \(prefetch.url.absoluteString)v1/sync/offline-prefetch with "
                    + "'Cookie: auth_refresh_token=<token>' and {\"cursor\":10,\"limit\":3}",
                "connect: put the token in the URL's query (as above) or send 'Cookie: auth_refresh_token=<token>' "
                    + "with the WebSocket upgrade, then {\"type\":\"phased_sync_request\",\"payload\":{\"phase\":\"all\",…}}",
            ]
        ) {
            endpoint.stop()
            prefetch.stop()
        }
    }
)
