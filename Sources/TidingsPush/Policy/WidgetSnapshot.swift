import Foundation
import TidingsCore

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

#if canImport(Darwin)
    private let systemWrite = Darwin.write
#elseif canImport(Glibc)
    private let systemWrite = Glibc.write
#elseif canImport(Musl)
    private let systemWrite = Musl.write
#endif

/// `WidgetSnapshot` is what the widgets show, shared across processes as one JSON file: per account, the unread
/// count and the recent mentions.
public struct WidgetSnapshot: Codable, Hashable, Sendable {
    /// One account's part.
    public struct Account: Codable, Hashable, Sendable {
        /// The app's account key.
        public var account: String
        /// The handle shown.
        public var handle: String
        /// Unread notification groups.
        public var unreadCount: Int
        /// The newest mentions, newest first (at most ``WidgetSnapshot/maximumMentions``).
        public var recentMentions: [Mention]

        /// An account's part; mentions beyond the limit are dropped.
        public init(account: String, handle: String, unreadCount: Int, recentMentions: [Mention]) {
            self.account = account
            self.handle = handle
            self.unreadCount = unreadCount
            self.recentMentions = Array(recentMentions.prefix(WidgetSnapshot.maximumMentions))
        }
    }

    /// A mention as a widget shows it: who, the plain text (truncated), when.
    public struct Mention: Codable, Hashable, Sendable {
        /// The notification's ID.
        public var id: ServerID
        /// The author's shown name.
        public var author: String
        /// The text, plain and truncated.
        public var text: String
        /// When it happened.
        public var date: Date?

        /// A mention.
        public init(id: ServerID, author: String, text: String, date: Date?) {
            self.id = id
            self.author = author
            self.text = NotificationPlainText.truncated(text)
            self.date = date
        }
    }

    /// How many mentions an account keeps in the snapshot.
    public static let maximumMentions = 5

    /// The accounts, in the app's order.
    public var accounts: [Account]
    /// When it was made.
    public var generatedAt: Date

    /// A snapshot.
    public init(accounts: [Account], generatedAt: Date) {
        self.accounts = accounts
        self.generatedAt = generatedAt
    }

    /// Writes the snapshot to `path` atomically, readable and writable by the owner only (0600): a temporary
    /// file beside it, created 0600, written and synced, then renamed over `path`. A reader sees the old file or
    /// the new one, never half of one.
    ///
    /// - Throws: ``WidgetSnapshotError/io(_:errno:)`` naming the step and `errno`.
    public func write(to path: String) throws(WidgetSnapshotError) {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(self) else { throw .io("encode", errno: 0) }
        // Unique per write, so two writers (threads or processes) never share a temporary file.
        let temporary = path + ".tmp-\(getpid())-\(UUID().uuidString)"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .io("create", errno: errno) }
        var failure: WidgetSnapshotError?
        // A stale temporary file keeps its mode through O_TRUNC: set it again.
        if fchmod(descriptor, 0o600) != 0 { failure = .io("chmod", errno: errno) }
        data.withUnsafeBytes { buffer in
            guard failure == nil, let base = buffer.baseAddress else { return }
            var offset = 0
            while offset < buffer.count {
                let written = systemWrite(descriptor, base + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = .io("write", errno: errno)
                    return
                }
                offset += written
            }
        }
        if failure == nil, fsync(descriptor) != 0 { failure = .io("fsync", errno: errno) }
        close(descriptor)
        if failure == nil, rename(temporary, path) != 0 { failure = .io("rename", errno: errno) }
        if let failure {
            unlink(temporary)
            throw failure
        }
    }

    /// Reads a snapshot written by ``write(to:)``.
    ///
    /// - Throws: ``WidgetSnapshotError/io(_:errno:)`` when it cannot be read, ``WidgetSnapshotError/malformed`` when it
    ///   is not a snapshot.
    public static func read(from path: String) throws(WidgetSnapshotError) -> WidgetSnapshot {
        guard let data = FileManager.default.contents(atPath: path) else { throw .io("read", errno: ENOENT) }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        guard (try? JSONValue(parsing: data, maximumDepth: 16)) != nil,
            let snapshot = try? decoder.decode(WidgetSnapshot.self, from: data)
        else { throw .malformed }
        return snapshot
    }
}

/// Why a widget snapshot could not be written or read.
public struct WidgetSnapshotError: TidingsError {
    enum Code: String { case io, malformed }

    let code: Code
    /// The step that failed (`create`, `write`, `fsync`, `rename`, `read`); empty for `malformed`.
    public let step: String
    /// The system's error number; 0 when none.
    public let errno: Int32

    /// A file operation failed.
    public static func io(_ step: String, errno: Int32) -> WidgetSnapshotError {
        WidgetSnapshotError(code: .io, step: step, errno: errno)
    }
    /// The file is not a snapshot.
    public static let malformed = WidgetSnapshotError(code: .malformed, step: "", errno: 0)
    /// Any file operation's failure, for matching (`catch WidgetSnapshotError.ioFailure`).
    public static let ioFailure = WidgetSnapshotError(code: .io, step: "", errno: 0)

    /// The kind (`io` or `malformed`).
    public var kind: TidingsErrorKind { TidingsErrorKind(code) }
    /// The kind, step and `errno`; never the snapshot's content.
    public var description: String {
        code == .io ? "WidgetSnapshotError.io(\(step), errno \(errno))" : "WidgetSnapshotError.malformed"
    }
}
