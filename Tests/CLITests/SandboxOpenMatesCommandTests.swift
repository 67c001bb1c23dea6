import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsOpenMates

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `tidings sandbox openmates`, run as the real executable: a client syncs with only what it printed.
@Suite(.timeLimit(.minutes(1))) struct SandboxOpenMatesCommandTests {
    @Test func servesOpenMatesUntilSIGINTAndAClientSyncs() async throws {
        let sandbox = try await SandboxOpenMatesLaunch.start()
        defer { sandbox.child.signal(SIGKILL) }
        let transport = try OpenMatesWebSocketTransport(
            origin: sandbox.origin, sessionID: UUID().uuidString, credential: .token(sandbox.token))
        let client = OpenMatesClient(
            transport: transport, store: try OpenMatesStore.inMemory(), clock: ContinuousClock())
        let changes = client.changes()
        await client.start()
        for await change in changes {
            if case .status(let status) = change, status.sync == .complete { break }
        }
        #expect(try client.store.chatList().count == 26)
        await client.close()

        let tail = try await sandbox.stop()
        #expect(tail.contains("Stopped on SIGINT."))
        #expect(
            (sandbox.output + tail).split(separator: "\n").contains {
                $0.hasPrefix("served: ") && $0.contains("/v1/ws")
            }
        )
        #expect(await sandbox.child.waitForExit(timeout: .seconds(20)) == .exited(0))
    }

    @Test func aBadPortIsAUsageError() async throws {
        #expect(try await ToolRun.run(["sandbox", "openmates", "--port", "-1"]).status == 64)
        #expect(try await ToolRun.run(["sandbox", "openmates", "--bogus"]).status == 64)
    }
}
