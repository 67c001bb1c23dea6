import Foundation
import PeerSupport
import Testing

@testable import TidingsCore

/// A storage whose saves can be made to fail, to prove a failed save never moves the marker.
final class FlakyMarkerStorage: MarkerStorage, Sendable {
    struct SaveFailed: Error {}
    private struct State {
        var values: [String: ServerID] = [:]
        var failing = false
    }
    private let state = LockedState(State())

    func failSaves(_ fail: Bool) { state.withLock { locked in locked.failing = fail } }

    func loadMarker(key: String) throws -> ServerID? { state.withLock { locked in locked.values[key] } }

    func saveMarker(_ value: ServerID, key: String) throws {
        try state.withLock { locked in
            if locked.failing { throw SaveFailed() }
            locked.values[key] = value
        }
    }
}

@Suite(.timeLimit(.minutes(1))) struct MarkerAdvanceTests {
    @Test func movesOnlyForwardInServerIDOrder() throws {
        let storage = InMemoryMarkerStorage()
        let log = LogCollector()
        let marker = try MonotonicMarker(
            key: "home.read", storage: storage,
            logger: TidingsLogger(subsystem: "marker", minimumLevel: .debug, sink: log.append))
        #expect(marker.value == nil)
        #expect(try marker.advance(to: "99"))
        #expect(try marker.advance(to: "100"), "longer decimal IDs are newer")
        #expect(try !marker.advance(to: "99"), "backwards is refused")
        #expect(try !marker.advance(to: "100"), "the same ID is not a move")
        #expect(try marker.advance(to: "101"))
        #expect(marker.value == "101")
        #expect(marker.refusedCount == 2)
        #expect(try storage.loadMarker(key: "home.read") == "101")
        #expect(log.records.count == 2)
        #expect(log.records.allSatisfy { $0.level == .notice && $0.message.contains("home.read") })
    }

    @Test func reloadsThePersistedValueAndKeepsRefusing() throws {
        let storage = InMemoryMarkerStorage(["notifications": "109372890233022"])
        let marker = try MonotonicMarker(key: "notifications", storage: storage)
        #expect(marker.value == "109372890233022")
        #expect(try !marker.advance(to: "109372890233021"))
        let other = try MonotonicMarker(key: "other", storage: storage)
        #expect(other.value == nil)
    }

    @Test func failedSaveDoesNotMoveTheMarker() throws {
        let storage = FlakyMarkerStorage()
        let marker = try MonotonicMarker(key: "k", storage: storage)
        try marker.advance(to: "5")
        storage.failSaves(true)
        #expect(throws: FlakyMarkerStorage.SaveFailed.self) { try marker.advance(to: "6") }
        #expect(marker.value == "5")
        storage.failSaves(false)
        #expect(try marker.advance(to: "6"))
        #expect(try storage.loadMarker(key: "k") == "6")
    }

    @Test func concurrentAdvancesKeepTheLargest() async throws {
        let storage = InMemoryMarkerStorage()
        let marker = try MonotonicMarker(key: "k", storage: storage)
        let ids = (1...500).map { ServerID(String($0)) }.shuffled()
        await withTaskGroup(of: Void.self) { group in
            for id in ids { group.addTask { _ = try? marker.advance(to: id) } }
        }
        #expect(marker.value == "500")
        #expect(try storage.loadMarker(key: "k") == "500")
    }
}
