import Foundation
import TidingsSandboxKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A request log that prints each request as it is served, so a developer sees their app arrive.
///
/// The kit's log entries hold method, path (or event name), status and byte counts only: never the query,
/// headers, cookies or bodies, where tokens travel.
func printingSandboxRequestLog() -> SandboxRequestLog {
    let console = Console.current
    return SandboxRequestLog { entry in
        console.writeOutput("served: \(entry)\n")
        fflush(nil)
    }
}

/// Prints what an app needs to connect, serves until SIGINT or SIGTERM arrives, then stops the server.
///
/// `termination` must be installed before the server starts listening, so a signal sent as soon as the
/// address is printed is never lost.
func serveUntilTerminated(_ termination: TerminationSignal, announcing lines: [String], stop: () -> Void) async {
    print(lines.joined(separator: "\n"))
    fflush(nil)
    let signal = await termination.wait()
    stop()
    print("Stopped on \(signal == SIGINT ? "SIGINT" : "SIGTERM").")
}
