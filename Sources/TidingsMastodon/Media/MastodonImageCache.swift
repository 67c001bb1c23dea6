import Foundation
import TidingsCore
import TidingsNet

/// A small on-disk cache of images (avatars, media previews): URL → file, evicting the least recently used
/// files beyond a size cap.
///
/// Guarantees:
/// - Files are created `0600` in a directory created `0700`, named by the SHA-256 of the URL (no URL, and so
///   no query that may carry a secret, ever appears in a file name, the index's file names or an error).
/// - ``cachedFile(for:)`` answers from memory, without I/O and without waiting: the notification policy's
///   avatar lookup can call it anywhere. It counts as a use for the LRU order.
/// - ``fetch(_:)`` downloads through a ``MastodonTransport`` (TidingsNet's `HTTPClient` in an app, whose
///   `maximumResponseSize` should be the per-file limit) and refuses a body over ``maximumFileBytes`` with
///   ``MastodonImageCacheError/tooLarge``; it never stores a partial file (written aside, then moved).
/// - The total stays under ``capacityBytes`` after every store and ``evict()``; the index is written after each
///   change (and ``evict()`` writes the use order), so a relaunch finds the same files.
/// - A corrupt index is a typed error (``MastodonImageCacheError/corruptIndex``) when the cache opens, never a
///   crash; ``evict()`` also removes files the index does not know (a crash between writing and indexing).
///
/// Disk work runs on a serial queue of its own, never on Swift's cooperative pool.
public final class MastodonImageCache: Sendable, Equatable {
    /// The same cache object (a cache is an identity: its directory and its in-memory use order).
    public static func == (lhs: MastodonImageCache, rhs: MastodonImageCache) -> Bool { lhs === rhs }

    /// Where the files and the index live.
    public let directory: URL
    /// The most bytes all files may take together.
    public let capacityBytes: Int
    /// The most bytes one image may take.
    public let maximumFileBytes: Int

    struct Entry: Codable, Equatable {
        var url: String
        var file: String
        var bytes: Int
        var used: UInt64
    }

    struct Index: Codable, Equatable {
        var version = 1
        var clock: UInt64 = 0
        var entries: [Entry] = []
    }

    private let transport: any MastodonTransport
    private let state: LockedState<Index>
    private let queue = DispatchQueue(label: "tidings.mastodon.image-cache")
    static let indexName = "index.json"

    /// Opens (or creates) the cache in `directory`.
    ///
    /// - Throws: ``MastodonImageCacheError/corruptIndex`` when an index exists and cannot be read;
    ///   ``MastodonImageCacheError/disk`` when the directory cannot be created.
    public init(
        directory: URL, capacityBytes: Int = 50 * 1024 * 1024, maximumFileBytes: Int = 2 * 1024 * 1024,
        transport: any MastodonTransport
    ) throws {
        self.directory = directory
        self.capacityBytes = max(0, capacityBytes)
        self.maximumFileBytes = max(0, maximumFileBytes)
        self.transport = transport
        state = LockedState(try Self.openIndex(in: directory))
    }

    /// The cached file of `url`, or nil; a hit moves it to the most recently used end.
    public func cachedFile(for url: URL) -> URL? {
        let key = url.absoluteString
        let file: String? = state.withLock { index in
            guard let position = index.entries.firstIndex(where: { $0.url == key }) else { return nil }
            index.clock += 1
            index.entries[position].used = index.clock
            return index.entries[position].file
        }
        return file.map { directory.appendingPathComponent($0) }
    }

    /// The cached file of `url`, downloading and storing it first when it is not cached.
    ///
    /// - Throws: ``MastodonImageCacheError`` (`notAnImageURL`, `download` for a non-2xx status, `tooLarge`,
    ///   `disk`); the transport's errors (`HTTPError`, `MastodonError`); `CancellationError`.
    public func fetch(_ url: URL) async throws -> URL {
        if let file = cachedFile(for: url) { return file }
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw MastodonImageCacheError(.notAnImageURL)
        }
        let response = try await transport.response(for: HTTPRequest(url: url))
        guard response.isSuccess else {
            throw MastodonImageCacheError(.download, detail: "status \(response.status)")
        }
        try await store(response.body, for: url)
        guard let file = cachedFile(for: url) else { throw MastodonImageCacheError(.disk, detail: "evicted at once") }
        return file
    }

    /// Stores `data` as the image of `url` (replacing one cached before), then evicts down to the capacity.
    ///
    /// - Throws: ``MastodonImageCacheError/tooLarge`` over ``maximumFileBytes`` or the capacity;
    ///   ``MastodonImageCacheError/disk``.
    public func store(_ data: Data, for url: URL) async throws {
        guard data.count <= maximumFileBytes, data.count <= capacityBytes else {
            throw MastodonImageCacheError(.tooLarge, detail: "\(data.count) bytes over \(maximumFileBytes)")
        }
        let key = url.absoluteString
        let name = Self.fileName(for: key)
        let directory = directory
        let state = state
        // The file and its entry together on the queue, so an eviction pass never sees one without the other.
        try await onQueue {
            try Self.writeFile(data, named: name, in: directory)
            state.withLock { index in
                index.clock += 1
                index.entries.removeAll { $0.url == key }
                index.entries.append(Entry(url: key, file: name, bytes: data.count, used: index.clock))
            }
        }
        try await evict()
    }

    /// What one eviction pass removed.
    public struct EvictionReport: Sendable, Equatable {
        /// Files removed to get under the capacity (least recently used first).
        public var evicted = 0
        /// Files on disk the index did not know, removed.
        public var orphans = 0
        /// Index entries whose file was gone, dropped.
        public var missing = 0
        /// The bytes the cache holds afterwards.
        public var bytes = 0
    }

    /// Removes the least recently used files until the total is within ``capacityBytes``, files the index does
    /// not know, and entries whose file is gone; writes the index.
    @discardableResult
    public func evict() async throws -> EvictionReport {
        let directory = directory
        let capacity = capacityBytes
        let state = state
        let (kept, report) = try await onQueue { () throws -> (Index, EvictionReport) in
            var report = EvictionReport()
            var index = state.withLock { $0 }
            let present = Set(try Self.files(in: directory))
            let before = index.entries.count
            index.entries.removeAll { !present.contains($0.file) }
            report.missing = before - index.entries.count
            index.entries.sort { $0.used < $1.used }
            var total = index.entries.reduce(0) { $0 + $1.bytes }
            while total > capacity, let oldest = index.entries.first {
                try Self.remove(oldest.file, in: directory)
                total -= oldest.bytes
                index.entries.removeFirst()
                report.evicted += 1
            }
            let known = Set(index.entries.map(\.file))
            // Unknown files: a crash between writing and indexing, or a partial write (`.name.partial`).
            for file in present where !known.contains(file) {
                try Self.remove(file, in: directory)
                report.orphans += 1
            }
            report.bytes = total
            try Self.writeIndex(index, in: directory)
            return (index, report)
        }
        // Uses counted while the pass ran stay counted; only removed entries go.
        let remaining = Set(kept.entries.map(\.file))
        state.withLock { index in index.entries.removeAll { !remaining.contains($0.file) } }
        return report
    }

    /// The bytes the cache holds, by its index.
    public var totalBytes: Int { state.withLock { $0.entries.reduce(0) { $0 + $1.bytes } } }

    // MARK: Disk

    private func onQueue<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }

    static func fileName(for key: String) -> String {
        TidingsCrypto.SHA256.hash(Array(key.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    static func openIndex(in directory: URL) throws -> Index {
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw MastodonImageCacheError(.disk, detail: "cannot create the cache directory")
        }
        let path = directory.appendingPathComponent(indexName)
        guard let data = FileManager.default.contents(atPath: path.path) else { return Index() }
        let index: Index
        do {
            index = try JSONValue(parsing: [UInt8](data)).decode(Index.self)
        } catch {
            throw MastodonImageCacheError(.corruptIndex, detail: "not an index")
        }
        guard index.version == 1 else {
            throw MastodonImageCacheError(.corruptIndex, detail: "version \(index.version)")
        }
        // Every file name must be one this cache makes: 64 hex digits, nothing that leaves the directory.
        for entry in index.entries {
            guard entry.file.count == 64, entry.file.allSatisfy(\.isHexDigit), entry.bytes >= 0 else {
                throw MastodonImageCacheError(.corruptIndex, detail: "a bad entry")
            }
        }
        return index
    }

    static func files(in directory: URL) throws -> [String] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
                $0 != indexName
            }
        } catch {
            throw MastodonImageCacheError(.disk, detail: "cannot list the cache directory")
        }
    }

    static func writeFile(_ data: Data, named name: String, in directory: URL) throws {
        // Written aside, then moved: a crash never leaves a partial image under its real name.
        let temporary = directory.appendingPathComponent(".\(name).partial")
        let target = directory.appendingPathComponent(name)
        try? FileManager.default.removeItem(at: temporary)
        guard
            FileManager.default.createFile(
                atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600])
        else { throw MastodonImageCacheError(.disk, detail: "cannot write \(name)") }
        guard rename(temporary.path, target.path) == 0 else {
            try? FileManager.default.removeItem(at: temporary)
            throw MastodonImageCacheError(.disk, detail: "cannot move \(name)")
        }
    }

    static func writeIndex(_ index: Index, in directory: URL) throws {
        let data: Data
        do {
            data = try JSONEncoder().encode(index)
        } catch {
            throw MastodonImageCacheError(.disk, detail: "cannot encode the index")
        }
        try writeFile(data, named: indexName, in: directory)
    }

    static func remove(_ name: String, in directory: URL) throws {
        do {
            try FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        } catch CocoaError.fileNoSuchFile {
            return
        } catch {
            throw MastodonImageCacheError(.disk, detail: "cannot remove \(name)")
        }
    }
}
