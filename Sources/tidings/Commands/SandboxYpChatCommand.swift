import Foundation
import TidingsSandbox
import TidingsSandboxKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `tidings sandbox ypchat [--port N]`: the YpChat sandbox (REST and Socket.IO on one port).
let sandboxYpChatCommand = Command(
    name: "ypchat",
    abstract: "Serve the YpChat sandbox (REST with session cookies, Socket.IO) on loopback; print its URL.",
    options: [portOption],
    validate: { parsed in try parsed.int(portOption, in: 0...65_535) ?? 0 },
    run: { port in
        let termination = TerminationSignal()
        let state = YpChatSandboxState()
        let server = YpChatSandboxServer(state: state, log: printingSandboxRequestLog())
        let listener = try server.serve(port: port)
        let base =
            listener.url.absoluteString.hasSuffix("/")
            ? String(listener.url.absoluteString.dropLast()) : listener.url.absoluteString
        await serveUntilTerminated(
            termination,
            announcing: [
                "YpChat sandbox listening on 127.0.0.1 (Ctrl-C to stop).",
                "url: \(base)",
                "socket.io: \(base)/socket.io/ (polling and websocket, Engine.IO 4)",
                "feedback admin password: \(state.adminPassword) (the sandbox's public demo value)",
                "connect: set the app's BASE_URL (or YPCHAT_BASE_URL) to the url and allow plain http for loopback",
            ]
        ) { listener.stop() }
    }
)
