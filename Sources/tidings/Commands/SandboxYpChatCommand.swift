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
        // Requests and events are printed as served (method, path or event name, status; never
        // cookies or bodies).
        let console = Console.current
        let log = SandboxRequestLog { entry in
            console.writeOutput("served: \(entry)\n")
            fflush(nil)
        }
        let state = YpChatSandboxState()
        let server = YpChatSandboxServer(state: state, log: log)
        let listener = try server.serve(port: port)
        let base =
            listener.url.absoluteString.hasSuffix("/")
            ? String(listener.url.absoluteString.dropLast()) : listener.url.absoluteString
        print(
            [
                "YpChat sandbox listening on 127.0.0.1 (Ctrl-C to stop).",
                "url: \(base)",
                "socket.io: \(base)/socket.io/ (polling and websocket, Engine.IO 4)",
                "feedback admin password: \(state.adminPassword) (the sandbox's public demo value)",
                "connect: set the app's BASE_URL (or YPCHAT_BASE_URL) to the url and allow plain http for loopback",
            ].joined(separator: "\n"))
        fflush(nil)
        let signal = await termination.wait()
        listener.stop()
        print("Stopped on \(signal == SIGINT ? "SIGINT" : "SIGTERM").")
    }
)
