import Foundation

/// Where the saved login profile lives between launches (the Android app's `ProfileStore`): one JSON
/// file.
///
/// Guarantees:
/// - ``save(_:)`` is durable and atomic: the profile is written to a temporary file with mode 0600,
///   flushed to disk, then renamed over the old one; a crash leaves the old or the new profile,
///   never half of one. The file is never readable by other users.
/// - ``load()`` gives nil for a missing file and for a damaged one (the person types it again),
///   never an error.
/// - File work runs on a serial queue of the store's own, never on a thread of Swift's pool.
public final class YpChatProfileStore: Sendable {
    /// The file.
    public let url: URL
    private let queue = DispatchQueue(label: "tidings.ypchat.profile")

    /// A store keeping its profile at `url` (the directory must exist).
    public init(url: URL) { self.url = url }

    /// The saved profile, or nil.
    public func load() async -> ChatProfile? {
        await run { [url] in
            guard let data = try? Data(contentsOf: url) else { return nil }
            return try? JSONDecoder().decode(ChatProfile.self, from: data)
        }
    }

    /// Saves `profile` durably (see the type's guarantees).
    ///
    /// - Throws: `CocoaError`/`POSIXError` when the file cannot be written.
    public func save(_ profile: ChatProfile) async throws {
        let data = try JSONEncoder().encode(profile)
        try await runThrowing { [url] in try Self.writeDurably(data, to: url) }
    }

    /// Removes the saved profile.
    public func clear() async {
        await run { [url] in try? FileManager.default.removeItem(at: url) }
    }

    private static func writeDurably(_ data: Data, to url: URL) throws {
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var failure: POSIXErrorCode?
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = POSIXErrorCode(rawValue: errno) ?? .EIO
                    return
                }
                offset += written
            }
        }
        if failure == nil, fsync(descriptor) != 0 { failure = POSIXErrorCode(rawValue: errno) ?? .EIO }
        close(descriptor)
        if let failure {
            unlink(temporary.path)
            throw POSIXError(failure)
        }
        guard rename(temporary.path, url.path) == 0 else {
            let code = POSIXErrorCode(rawValue: errno) ?? .EIO
            unlink(temporary.path)
            throw POSIXError(code)
        }
        // The rename is durable only once the directory is flushed.
        let directory = open(url.deletingLastPathComponent().path, O_RDONLY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
    }

    private func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in queue.async { continuation.resume(returning: work()) } }
    }

    private func runThrowing(_ work: @escaping @Sendable () throws -> Void) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }
}
