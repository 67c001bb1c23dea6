import Foundation
import TidingsCore

/// The sweep of copied uploads: files the app copied into a staging directory to upload them (a picked photo
/// kept until its media upload is sent) and that nothing will send any more.
///
/// A file goes when its modification date is older than ``maximumAge`` by ``now`` and the app does not name it
/// as still needed (an upload its outbox still holds). Only plain files directly in ``directory`` are touched.
/// The disk work runs on a queue of its own, never on Swift's cooperative pool.
public struct MastodonUploadSweep: Sendable, Equatable {
    /// The staging directory.
    public var directory: URL
    /// How old a copy may get before it is swept.
    public var maximumAge: Duration
    /// The current date (injected so tests decide the time).
    public var now: @Sendable () -> Date

    /// A sweep of `directory` (a day by default).
    public init(
        directory: URL, maximumAge: Duration = .seconds(24 * 3600), now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.directory = directory
        self.maximumAge = maximumAge
        self.now = now
    }

    /// Equal when they sweep the same directory with the same age (the date source is not compared).
    public static func == (lhs: MastodonUploadSweep, rhs: MastodonUploadSweep) -> Bool {
        lhs.directory == rhs.directory && lhs.maximumAge == rhs.maximumAge
    }

    /// Removes the copies older than ``maximumAge`` except those named in `keeping` (file names).
    ///
    /// - Returns: The names removed, sorted. A missing directory is nothing to sweep.
    /// - Throws: ``MastodonImageCacheError/disk`` when a file cannot be removed.
    @discardableResult
    public func sweep(keeping: Set<String> = []) async throws -> [String] {
        let directory = directory
        let cutoff = now().addingTimeInterval(-Double(maximumAge.components.seconds))
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue(label: "tidings.mastodon.upload-sweep").async {
                continuation.resume(
                    with: Result { try Self.sweep(directory, olderThan: cutoff, keeping: keeping) })
            }
        }
    }

    static func sweep(_ directory: URL, olderThan cutoff: Date, keeping: Set<String>) throws -> [String] {
        let manager = FileManager.default
        guard let names = try? manager.contentsOfDirectory(atPath: directory.path) else { return [] }
        var removed: [String] = []
        for name in names.sorted() where !keeping.contains(name) {
            let path = directory.appendingPathComponent(name).path
            guard let attributes = try? manager.attributesOfItem(atPath: path),
                attributes[.type] as? FileAttributeType == .typeRegular,
                let modified = attributes[.modificationDate] as? Date, modified < cutoff
            else { continue }
            do {
                try manager.removeItem(atPath: path)
            } catch {
                throw MastodonImageCacheError(.disk, detail: "cannot remove the upload copy \(name)")
            }
            removed.append(name)
        }
        return removed
    }
}
