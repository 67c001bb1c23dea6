import Foundation
import PeerSupport
import Testing

@testable import TidingsCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A store's lock held only for an instant (a child process between `fork` and `exec` shares our lock file's
/// description) does not make a needed replacement fail; a lock held for good still does.
@Suite(.timeLimit(.minutes(1))) struct StoreLockPatienceTests {
    private static let newer = SQLiteSchema(
        tables: TestSchema.tables,
        migrations: [
            TestSchema.version1,
            .init(version: 2, name: "index") { try $0.execute("CREATE INDEX m_seen ON messages(seen)") },
        ])

    /// Holds a shared `flock` on the store's lock file, as a second open file description would.
    private static func holdLock(of path: String) throws -> Int32 {
        let descriptor = open(path + ".lock", O_RDWR | O_CLOEXEC)
        try #require(descriptor >= 0)
        try #require(flock(descriptor, LOCK_SH | LOCK_NB) == 0)
        return descriptor
    }

    @Test func aLockHeldForAnInstantIsWaitedOut() async throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        _ = try SQLiteDatabase(path: path, schema: Self.newer)
        let held = try Self.holdLock(of: path)
        // Released 50 ms from now, while the open below waits for the lock with a patience no load can exhaust.
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) { _ = close(held) }
        let patient = SQLiteDatabase.Configuration(lockPatience: .seconds(50))
        let opened = try await onDedicatedThread("open") {
            Result {
                try SQLiteDatabase(path: path, schema: TestSchema.schema, configuration: patient).openReport.recovery?
                    .reason
            }
        }
        #expect(try opened.get() == .schemaTooNew(found: 2, known: 1))
    }

    @Test func aLockHeldForGoodStillMeansBusy() async throws {
        let directory = try StoreTemporaryDirectory()
        let path = directory.path("store.sqlite")
        _ = try SQLiteDatabase(path: path, schema: Self.newer)
        let held = try Self.holdLock(of: path)
        defer { _ = close(held) }
        let opened = try await onDedicatedThread("open") {
            Result { try SQLiteDatabase(path: path, schema: TestSchema.schema).openReport.recovery?.reason }
        }
        #expect(throws: StoreError.busy) { try opened.get() }
        #expect(try directory.files().allSatisfy { !$0.contains("corrupt") })
    }
}
