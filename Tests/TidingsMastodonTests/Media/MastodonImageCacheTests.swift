import Foundation
import Testing
import TidingsCore
import TidingsMastodon
import TidingsNet
import TidingsSandbox
import TidingsSandboxKit

/// The on-disk image cache (LRU under a size cap, 0600 files, typed errors) and the sweep of copied uploads,
/// alone and through `MastodonSync.maintenance()`.
@Suite(.timeLimit(.minutes(1)))
struct MastodonImageCacheTests {
    /// Serves `/<name>.png` as `size` bytes of `name`'s first letter (size from the name's digits, 100 if none);
    /// anything else is 404.
    static func imageServer(log: SandboxRequestLog = SandboxRequestLog()) -> SandboxHTTPServer {
        SandboxHTTPServer(log: log) { request in
            guard request.path.hasSuffix(".png"), let first = request.path.dropFirst().first else {
                return .text("not found", status: 404)
            }
            let digits = request.path.filter(\.isNumber)
            let size = Int(digits) ?? 100
            return SandboxHTTPResponse(status: 200, body: Data(repeating: UInt8(first.asciiValue ?? 0), count: size))
        }
    }

    static func directory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("tidings-image-cache-\(UUID())")
    }

    static func url(_ path: String) -> URL { URL(string: "https://media.example/\(path)?token=secret")! }

    static func permissions(_ url: URL) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int)
    }

    @Test func theLeastRecentlyUsedImageGoesFirstAndFilesArePrivate() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = SandboxRequestLog()
        let cache = try MastodonImageCache(
            directory: directory, capacityBytes: 250, maximumFileBytes: 100,
            transport: MastodonSandboxTransport(server: Self.imageServer(log: log)))
        let a = try await cache.fetch(Self.url("a.png"))
        _ = try await cache.fetch(Self.url("b.png"))
        #expect(try Data(contentsOf: a) == Data(repeating: UInt8(ascii: "a"), count: 100))
        #expect(cache.cachedFile(for: Self.url("a.png")) == a)  // a used after b
        _ = try await cache.fetch(Self.url("a.png"))  // a hit: no request
        #expect(log.entries.count == 2)
        let c = try await cache.fetch(Self.url("c.png"))
        #expect(cache.cachedFile(for: Self.url("b.png")) == nil)
        #expect(cache.cachedFile(for: Self.url("a.png")) == a && cache.cachedFile(for: Self.url("c.png")) == c)
        #expect(cache.totalBytes == 200)
        #expect(try Self.permissions(a) == 0o600 && Self.permissions(directory) == 0o700)
        // Neither file names nor the index hold the URL (its query may carry a secret).
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(names.allSatisfy { !$0.contains("secret") && !$0.contains("media") })
        let index = try String(contentsOf: directory.appendingPathComponent("index.json"), encoding: .utf8)
        #expect(names.sorted() == [a.lastPathComponent, c.lastPathComponent, "index.json"].sorted())
        #expect(index.contains(a.lastPathComponent))

        // A relaunch on the same directory finds the same files, in the same use order.
        let reopened = try MastodonImageCache(
            directory: directory, capacityBytes: 250, maximumFileBytes: 100,
            transport: MastodonSandboxTransport(server: Self.imageServer()))
        #expect(reopened.cachedFile(for: Self.url("c.png")) == c)
        _ = try await reopened.fetch(Self.url("d.png"))
        _ = try await reopened.fetch(Self.url("e.png"))
        #expect(reopened.cachedFile(for: Self.url("a.png")) == nil)  // the oldest use went first
        #expect(reopened.cachedFile(for: Self.url("c.png")) == nil)
    }

    @Test func tooLargeAndFailedDownloadsAreTypedErrorsAndStoreNothing() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try MastodonImageCache(
            directory: directory, capacityBytes: 1000, maximumFileBytes: 100,
            transport: MastodonSandboxTransport(server: Self.imageServer()))
        await #expect(throws: MastodonImageCacheError.tooLarge) { try await cache.fetch(Self.url("big150.png")) }
        await #expect(throws: MastodonImageCacheError.download) { try await cache.fetch(Self.url("missing")) }
        await #expect(throws: MastodonImageCacheError.notAnImageURL) {
            try await cache.fetch(URL(string: "file:///etc/passwd")!)
        }
        #expect(cache.totalBytes == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    /// Through TidingsNet's `HTTPClient` over loopback, its response limit stops a large body at the transport.
    @Test func downloadsGoThroughHTTPClientWithItsSizeLimit() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let listener = try Self.imageServer().serve()
        defer { listener.stop() }
        let client = HTTPClient(configuration: .init(maximumResponseSize: 100))
        let cache = try MastodonImageCache(
            directory: directory, capacityBytes: 1000, maximumFileBytes: 100, transport: client)
        let small = try await cache.fetch(listener.url.appendingPathComponent("s80.png"))
        #expect(try Data(contentsOf: small).count == 80)
        await #expect(throws: HTTPError.transport) {
            try await cache.fetch(listener.url.appendingPathComponent("b5000.png"))
        }
        #expect(cache.totalBytes == 80)
    }

    @Test func aCorruptIndexIsATypedError() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let index = directory.appendingPathComponent("index.json")
        let transport = MastodonSandboxTransport(server: Self.imageServer())
        for text in [
            "not json", #"{"version":2,"clock":0,"entries":[]}"#,
            #"{"version":1,"clock":0,"entries":[{"url":"u","file":"../../etc/passwd","bytes":1,"used":1}]}"#,
        ] {
            try Data(text.utf8).write(to: index)
            #expect(throws: MastodonImageCacheError.corruptIndex) {
                try MastodonImageCache(directory: directory, transport: transport)
            }
        }
    }

    @Test func evictionRemovesOrphansPartialsAndMissingEntries() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try MastodonImageCache(
            directory: directory, transport: MastodonSandboxTransport(server: Self.imageServer()))
        let kept = try await cache.fetch(Self.url("k.png"))
        let gone = try await cache.fetch(Self.url("g.png"))
        try FileManager.default.removeItem(at: gone)
        try Data("x".utf8).write(to: directory.appendingPathComponent("stray"))
        try Data("x".utf8).write(to: directory.appendingPathComponent(".abc.partial"))
        let report = try await cache.evict()
        #expect(report.orphans == 2 && report.missing == 1 && report.evicted == 0 && report.bytes == 100)
        #expect(cache.cachedFile(for: Self.url("g.png")) == nil && cache.cachedFile(for: Self.url("k.png")) == kept)
    }

    @Test func copiedUploadsOlderThanTheirAgeAreSweptUnlessStillNeeded() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        for (name, hoursAgo) in [("old.jpg", 30.0), ("pending.jpg", 48.0), ("fresh.jpg", 2.0)] {
            let file = directory.appendingPathComponent(name)
            try Data("x".utf8).write(to: file)
            try FileManager.default.setAttributes(
                [.modificationDate: now.addingTimeInterval(-hoursAgo * 3600)], ofItemAtPath: file.path)
        }
        let sweep = MastodonUploadSweep(directory: directory, maximumAge: .seconds(24 * 3600), now: { now })
        #expect(try await sweep.sweep(keeping: ["pending.jpg"]) == ["old.jpg"])
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == [
                "fresh.jpg", "pending.jpg",
            ])
        // A day later by the injected clock, the fresh copy goes too.
        let later = MastodonUploadSweep(directory: directory, now: { now.addingTimeInterval(24 * 3600) })
        #expect(try await later.sweep(keeping: ["pending.jpg"]) == ["fresh.jpg"])
        #expect(try await MastodonUploadSweep(directory: directory.appendingPathComponent("none")).sweep() == [])
    }

    @Test func maintenanceEvictsTheImageCacheAndSweepsUploads() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let uploads = directory.appendingPathComponent("uploads")
        try FileManager.default.createDirectory(at: uploads, withIntermediateDirectories: true)
        let copy = uploads.appendingPathComponent("copy.jpg")
        try Data("x".utf8).write(to: copy)
        let now = Date().addingTimeInterval(2 * 24 * 3600)
        var policy = MastodonMaintenancePolicy()
        policy.imageCache = try MastodonImageCache(
            directory: directory.appendingPathComponent("images"), capacityBytes: 150,
            transport: MastodonSandboxTransport(server: Self.imageServer()))
        policy.uploads = MastodonUploadSweep(directory: uploads, now: { now })
        _ = try await policy.imageCache?.fetch(Self.url("a.png"))
        let sync = MastodonSync(clock: TestClock(), maintenance: policy)
        let report = try await sync.maintenance()
        #expect(report.imageCache?.bytes == 100)
        #expect(report.uploadsSwept == ["copy.jpg"])
        #expect(!FileManager.default.fileExists(atPath: copy.path))
    }
}
