import Foundation
import Testing
import TidingsCore
import TidingsSandbox

@testable import TidingsOpenMates

/// The server's failures, pushed by the sandbox to a running client, reach the UI twice: once as
/// `Change.failure`, and as `status.lastError` for whoever binds to the status.
@Suite(.timeLimit(.minutes(1))) struct OpenMatesServerErrorTests {
    private static func synced() async throws -> OpenMatesClientHarness {
        let harness = try OpenMatesClientHarness()
        await harness.server.seed(parents: 3)
        await harness.client.start()
        #expect(await harness.untilSynced())
        return harness
    }

    /// The next failure the client announces.
    private static func nextFailure(_ harness: OpenMatesClientHarness) async -> OpenMatesError? {
        var failure: OpenMatesError?
        _ = await harness.until { change in
            if case .failure(let error) = change { failure = error }
            return failure != nil
        }
        return failure
    }

    @Test func anErrorEventIsAFailureAndTheLastErrorAndLeavesTheConnection() async throws {
        let harness = try await Self.synced()
        #expect(await harness.server.push("error", ["message": "rate limited, try later"]) == 1)
        let failure = try #require(await Self.nextFailure(harness))
        #expect(failure == .server)
        #expect(failure.detail == "rate limited, try later")
        #expect(await harness.untilStatus { $0.lastError == "rate limited, try later" })
        let status = await harness.client.status
        #expect(status.connectionStatus == .connected)
        #expect(status.sync == .complete)
        await harness.client.close()
    }

    @Test func anInitialSyncErrorIsAFailureAndTheLastError() async throws {
        let harness = try await Self.synced()
        await harness.server.push("initial_sync_error", ["message": "cache unavailable"])
        let failure = try #require(await Self.nextFailure(harness))
        #expect(failure == .initialSyncFailed)
        #expect(failure.detail == "cache unavailable")
        #expect(await harness.untilStatus { $0.lastError == "initial sync failed: cache unavailable" })
        await harness.client.close()
    }

    @Test func anOfflineSyncReplyThatAppliedNothingIsAFailureAndTheLastError() async throws {
        let harness = try await Self.synced()
        // A reply that applied something is no failure: the next failure read is the marker after it.
        await harness.server.push("offline_sync_complete", ["processed": 2, "conflicts": 0, "errors": []])
        await harness.server.push("error", ["message": "marker"])
        #expect(try #require(await Self.nextFailure(harness)).detail == "marker")

        await harness.server.push("offline_sync_complete", ["processed": 0, "conflicts": 0, "errors": []])
        let failure = try #require(await Self.nextFailure(harness))
        #expect(failure == .server)
        #expect(failure.operation == "offline_sync_complete")
        #expect(await harness.untilStatus { $0.lastError?.contains("applied nothing") == true })
        #expect(await harness.client.status.lastError?.hasPrefix("offline_sync_complete") == true)
        await harness.client.close()
    }
}
