import Dispatch
import Foundation
import Testing

@testable import TidingsCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whether `<path>.lock` can be taken exclusively through an open file description of its own, which
/// conflicts with a store's `flock` as another process's would.
///
/// A free lock may read as held for an instant: a process that another test spawns shares this process's open
/// file descriptions between its `fork` and its `exec`, the store's `.lock` among them when it was still open
/// then. So a held lock is tried again for up to two seconds (a suspension test's polls, not a schedule); a
/// lock really held stays held.
func storeLockBecomesFree(_ path: String) async -> Bool {
    let clock = ContinuousClock()
    let end = clock.now + .seconds(2)
    while true {
        if storeLockIsFreeNow(path) { return true }
        guard clock.now < end else { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
}

/// One non-blocking try of ``storeLockBecomesFree(_:)``.
func storeLockIsFreeNow(_ path: String) -> Bool {
    let descriptor = open(path + ".lock", O_RDWR | O_CLOEXEC)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    return flock(descriptor, LOCK_EX | LOCK_NB) == 0
}

/// `SQLiteDatabase.suspend()` / `resume()` in one process: what waits, what fails, what is let go.
@Suite(.timeLimit(.minutes(1))) struct StoreSuspensionTests {
    private static let insert = "INSERT INTO outbox(id, payload, created_at) VALUES (?, ?, 0)"

    private func count(_ database: SQLiteDatabase) async throws -> Int {
        try await database.read { try $0.fetchOne(Int.self, "SELECT count(*) FROM outbox") ?? -1 }
    }

    /// The rows of `path` as another connection of this process sees them (the store under test is suspended).
    private func countFromAnotherConnection(_ path: String) throws -> Int {
        let other = try SQLiteDatabase(path: path, schema: TestSchema.schema)
        defer { other.close() }
        return try other.read { try $0.fetchOne(Int.self, "SELECT count(*) FROM outbox") ?? -1 }
    }

    @Test func aWriteAskedForWhileSuspendedWaitsAndLandsAfterResume() async throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        let (events, sink) = AsyncStream.makeStream(of: SQLiteDatabase.SuspensionWait.self)
        var configuration = SQLiteDatabase.Configuration(whenSuspended: .wait)
        configuration.suspensionWait = { sink.yield($0) }
        let database = try SQLiteDatabase(path: path, schema: TestSchema.schema, configuration: configuration)
        try await database.suspend()
        #expect(database.isSuspended)

        let writing = Task { try await database.write { try $0.execute(Self.insert, [1, [UInt8(1)]]) } }
        var waits = events.makeAsyncIterator()
        #expect(await waits.next() == .access)
        #expect(try countFromAnotherConnection(path) == 0)

        try await database.resume()
        try await writing.value
        #expect(!database.isSuspended)
        #expect(try await count(database) == 1)
    }

    @Test func aSynchronousWriteWaitsOnItsOwnThreadUntilResume() async throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        let (events, sink) = AsyncStream.makeStream(of: String.self)
        var configuration = SQLiteDatabase.Configuration(whenSuspended: .wait)
        configuration.suspensionWait = { if $0 == .access { sink.yield("waits") } }
        let database = try SQLiteDatabase(path: path, schema: TestSchema.schema, configuration: configuration)
        try await database.suspend()

        // A thread of its own: the synchronous form blocks its caller's thread, never one of the pool.
        let thread = Thread {
            do {
                try database.write { try $0.execute(Self.insert, [7, [UInt8(1)]]) }
                sink.yield("wrote")
            } catch {
                sink.yield("failed \(error)")
            }
        }
        thread.start()
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == "waits")
        #expect(try countFromAnotherConnection(path) == 0)
        try await database.resume()
        #expect(await iterator.next() == "wrote")
        #expect(try await count(database) == 1)
    }

    @Test func inFailModeAnAccessWhileSuspendedThrowsAndChangesNothing() async throws {
        let directory = try StoreTemporaryDirectory()
        let database = try SQLiteDatabase(path: directory.path("store.sqlite"), schema: TestSchema.schema)
        try await database.write { try $0.execute(Self.insert, [1, [UInt8(1)]]) }
        try await database.suspend()

        let ran = LockedState(false)
        await #expect(throws: StoreError.suspended) {
            try await database.write { db in
                ran.withLock { $0 = true }
                try db.execute(Self.insert, [2, [UInt8(1)]])
            }
        }
        #expect(throws: StoreError.suspended) {
            try database.write { db in
                ran.withLock { $0 = true }
                try db.execute(Self.insert, [3, [UInt8(1)]])
            }
        }
        await #expect(throws: StoreError.suspended) { try await database.read { _ in ran.withLock { $0 = true } } }
        await #expect(throws: StoreError.suspended) { try await database.checkpoint() }
        #expect(!ran.withLock { $0 })

        try await database.resume()
        #expect(try await count(database) == 1)
    }

    @Test func aWriteInFlightFinishesBeforeSuspendReturns() async throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        let (events, sink) = AsyncStream.makeStream(of: String.self)
        var configuration = SQLiteDatabase.Configuration()
        configuration.suspensionWait = { if $0 == .suspend { sink.yield("suspend waits") } }
        let database = try SQLiteDatabase(path: path, schema: TestSchema.schema, configuration: configuration)
        let release = DispatchSemaphore(value: 0)

        // The body blocks the store's own queue (never a pool thread) until the test lets it go.
        let writing = Task {
            try await database.write { db in
                try db.execute(Self.insert, [1, [UInt8(1)]])
                sink.yield("write started")
                release.wait()
                try db.execute(Self.insert, [2, [UInt8(1)]])
            }
        }
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == "write started")
        let suspending = Task { try await database.suspend() }
        #expect(await iterator.next() == "suspend waits")
        #expect(!database.isSuspended)
        release.signal()
        try await suspending.value

        // Suspended, so the connection is closed: the write committed whole before that.
        #expect(database.isSuspended)
        #expect(try countFromAnotherConnection(path) == 2)
        try await writing.value
    }

    @Test func aSuspendedStoreHoldsNoLockAndResumesWithAnotherWriterSChanges() async throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        let database = try SQLiteDatabase(path: path, schema: TestSchema.schema)
        try await database.write { try $0.execute(Self.insert, [1, [UInt8(1)]]) }
        #expect(!storeLockIsFreeNow(path))

        try await database.suspend()
        #expect(await storeLockBecomesFree(path))
        #expect(try countFromAnotherConnection(path) == 1)
        // Another connection writes and closes while this one is suspended (checkpointing the WAL away).
        do {
            let other = try SQLiteDatabase(path: path, schema: TestSchema.schema)
            try await other.write { try $0.execute(Self.insert, [2, [UInt8(1)]]) }
            other.close()
        }
        try await database.resume()
        #expect(!storeLockIsFreeNow(path))
        #expect(try await count(database) == 2)
        try await database.write { try $0.execute(Self.insert, [3, [UInt8(1)]]) }
        #expect(try await count(database) == 3)
    }

    /// The synchronous forms, called from a synchronous function (in an async one the async forms are chosen).
    private func suspendAndResumeTwice(_ database: SQLiteDatabase) throws -> [Bool] {
        var seen: [Bool] = []
        try database.resume()
        seen.append(database.isSuspended)
        try database.suspend()
        try database.suspend()
        seen.append(database.isSuspended)
        try database.resume()
        try database.resume()
        seen.append(database.isSuspended)
        return seen
    }

    @Test func suspendAndResumeTwiceAreHarmlessAndSuspendInsideAnAccessIsRefused() async throws {
        let directory = try StoreTemporaryDirectory()
        let database = try SQLiteDatabase(path: directory.path("store.sqlite"), schema: TestSchema.schema)
        #expect(try suspendAndResumeTwice(database) == [false, true, false])
        await #expect(throws: StoreError.misuse) { try await database.write { _ in try database.suspend() } }
        #expect(!database.isSuspended)
        #expect(try await count(database) == 0)
    }

    @Test func aWaitingWriteCancelledThrowsAndLandsNothing() async throws {
        let directory = try StoreTemporaryDirectory()
        let (events, sink) = AsyncStream.makeStream(of: SQLiteDatabase.SuspensionWait.self)
        var configuration = SQLiteDatabase.Configuration(whenSuspended: .wait)
        configuration.suspensionWait = { sink.yield($0) }
        let database = try SQLiteDatabase(
            path: directory.path("store.sqlite"), schema: TestSchema.schema, configuration: configuration)
        try await database.suspend()
        let writing = Task { try await database.write { try $0.execute(Self.insert, [1, [UInt8(1)]]) } }
        var waits = events.makeAsyncIterator()
        #expect(await waits.next() == .access)
        writing.cancel()
        await #expect(throws: CancellationError.self) { try await writing.value }
        try await database.resume()
        #expect(try await count(database) == 0)
    }

    @Test func closingASuspendedStoreEndsItsWaitersWithMisuse() async throws {
        let directory = try StoreTemporaryDirectory()
        let (events, sink) = AsyncStream.makeStream(of: SQLiteDatabase.SuspensionWait.self)
        var configuration = SQLiteDatabase.Configuration(whenSuspended: .wait)
        configuration.suspensionWait = { sink.yield($0) }
        let path = directory.path("store.sqlite")
        let database = try SQLiteDatabase(path: path, schema: TestSchema.schema, configuration: configuration)
        try await database.suspend()
        let writing = Task { try await database.write { try $0.execute(Self.insert, [1, [UInt8(1)]]) } }
        var waits = events.makeAsyncIterator()
        #expect(await waits.next() == .access)
        database.close()
        await #expect(throws: StoreError.misuse) { try await writing.value }
        try await database.resume()
        #expect(try countFromAnotherConnection(path) == 0)
    }

    @Test func resumingAStoreWhoseFileWasRemovedThrowsAndStaysSuspended() async throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        let database = try SQLiteDatabase(path: path, schema: TestSchema.schema)
        try await database.suspend()
        try SQLiteDatabase.removeFiles(at: path)
        await #expect(throws: StoreError.cannotOpen) { try await database.resume() }
        #expect(database.isSuspended)
        // Not created again, empty, behind the app's back; and the `.lock` taken for the attempt was let go.
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(await storeLockBecomesFree(path))
    }

    @Test func anInMemoryStoreKeepsItsRowsAcrossASuspension() async throws {
        let database = try SQLiteDatabase.inMemory(schema: TestSchema.schema)
        try await database.write { try $0.execute(Self.insert, [1, [UInt8(1)]]) }
        try await database.suspend()
        await #expect(throws: StoreError.suspended) { try await database.read { _ in 0 } }
        try await database.resume()
        #expect(try await count(database) == 1)
    }

    @Test func aReadOnlyStoreClosesItsConnectionWhileSuspended() async throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        let writer = try SQLiteDatabase(path: path, schema: TestSchema.schema)
        try await writer.write { try $0.execute(Self.insert, [1, [UInt8(1)]]) }
        let reader = try SQLiteDatabase(path: path, schema: TestSchema.schema, configuration: .init(readOnly: true))
        try await reader.suspend()
        try await writer.write { try $0.execute(Self.insert, [2, [UInt8(1)]]) }
        try await reader.resume()
        #expect(try await count(reader) == 2)
    }
}

/// The opt-in that follows an app's lifecycle through `NotificationCenter`. Serialized with nothing else
/// that observes: these notifications reach every observing store of the process.
@Suite(.timeLimit(.minutes(1))) struct StoreSuspensionNotificationTests {
    @Test func anObservingStoreFollowsTheNotificationsAndAnotherDoesNot() async throws {
        let directory = try StoreTemporaryDirectory()
        let observing = try SQLiteDatabase(
            path: directory.path("observing.sqlite"), schema: TestSchema.schema,
            configuration: .init(observesSuspensionNotifications: true))
        let ignoring = try SQLiteDatabase(path: directory.path("ignoring.sqlite"), schema: TestSchema.schema)

        NotificationCenter.default.post(name: .tidingsStoreSuspend, object: nil)
        #expect(observing.isSuspended)
        #expect(!ignoring.isSuspended)
        #expect(await storeLockBecomesFree(directory.path("observing.sqlite")))
        await #expect(throws: StoreError.suspended) { try await observing.read { _ in 0 } }

        NotificationCenter.default.post(name: .tidingsStoreResume, object: nil)
        #expect(!observing.isSuspended)
        try await observing.write { try $0.execute("INSERT INTO settings(key, value) VALUES ('a', 'b')") }

        // Closing stops the observing; a closed store stays as it was.
        observing.close()
        NotificationCenter.default.post(name: .tidingsStoreSuspend, object: nil)
        #expect(!observing.isSuspended)
    }
}
