import Foundation
import TidingsCore
import TidingsKecalek

/// Where the cache key came from, so the output can say how private the cache is.
enum KecalekCacheKey: Sendable {
    /// `--key` or `TIDINGS_KECALEK_KEY`: the person's own key.
    case own(TidingsCrypto.SymmetricKey)
    /// The sandbox's fixed demo key: derived from a public string, so anyone can open the file.
    case sandboxDemo(TidingsCrypto.SymmetricKey)

    var key: TidingsCrypto.SymmetricKey {
        switch self {
        case .own(let key), .sandboxDemo(let key): key
        }
    }

    /// `own` or `sandbox-demo`, for `--json` output.
    var jsonName: String {
        switch self {
        case .own: "own"
        case .sandboxDemo: "sandbox-demo"
        }
    }

    /// How the cache is encrypted, for the `Cache:` line.
    var disclosure: String {
        switch self {
        case .own: "encrypted with your --key"
        case .sandboxDemo:
            "encrypted with the sandbox's public demo key: anyone can open it; pass --key for a private cache"
        }
    }

    /// The key from `--key` or its environment variable (`text`), or, without a server, the sandbox's public
    /// demo key.
    ///
    /// - Throws: ``ValidationError`` for a key that is not 64 hex digits, or when a real server has no key.
    static func resolve(_ text: String?, sandboxAllowed: Bool) throws -> KecalekCacheKey {
        if let text {
            guard let key = symmetricKey(hex: text) else { throw ValidationError("--key needs 64 hex digits.") }
            return .own(key)
        }
        guard sandboxAllowed else {
            throw ValidationError("--server needs --key (or TIDINGS_KECALEK_KEY) for the cache.")
        }
        return .sandboxDemo(
            try TidingsCrypto.SymmetricKey(
                bytes: TidingsCrypto.SHA256.hash(Array("tidings kecalek sandbox cache".utf8))))
    }
}

/// A 256-bit key from 64 hex digits, or nil.
func symmetricKey(hex: String) -> TidingsCrypto.SymmetricKey? {
    let digits = Array(hex.utf8)
    guard digits.count == 64 else { return nil }
    var bytes: [UInt8] = []
    for index in stride(from: 0, to: 64, by: 2) {
        guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else {
            return nil
        }
        bytes.append(byte)
    }
    return try? TidingsCrypto.SymmetricKey(bytes: bytes)
}

/// Runs blocking work (SQLite reads, file checks) on a thread of its own and awaits it, so the tool's
/// cooperative pool never waits on the disk.
func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue(label: "tidings.cli.blocking").async { continuation.resume(with: Result { try work() }) }
    }
}

/// What went wrong with a cache file, as one line and a sysexits code; the file is never touched.
func cacheFailure(_ error: any Error, store: String) -> ToolFailure {
    guard let error = error as? StoreError else {
        if let error = error as? KecalekError, error == .cache {
            return ToolFailure(ExitCode.dataError, "\(store): a cached row does not open (\(error)); left as it is.")
        }
        return ToolFailure(ExitCode.software, "\(store): \(error)")
    }
    switch error {
    case .wrongKey:
        return ToolFailure(
            ExitCode.noPermission, "\(store) was written with another key; left as it is (check --key).")
    case .notADatabase:
        return ToolFailure(ExitCode.dataError, "\(store) is not an SQLite database (\(error.message)); left as it is.")
    case .corrupt, .damagedKeyCheck, .tampered, .wrongRow:
        return ToolFailure(ExitCode.dataError, "\(store) is damaged (\(error.message)); left as it is.")
    case .misuse:
        return ToolFailure(
            ExitCode.dataError, "\(store) is not a Kecalek cache (\(error.message)); left as it is.")
    case .schemaTooNew:
        return ToolFailure(
            ExitCode.dataError, "\(store) was written by a newer tidings (\(error.message)); left as it is.")
    case .readOnly:
        return ToolFailure(
            ExitCode.dataError,
            "\(store) is not a current Kecalek cache (\(error.message)); left as it is "
                + "('tidings kecalek sync' rebuilds an old cache).")
    case .cannotOpen:
        return ToolFailure(ExitCode.noInput, "\(store) cannot be opened (\(error.message)).")
    case .busy:
        return ToolFailure(ExitCode.temporaryFailure, "\(store) is busy (\(error.message)); try again.")
    default:
        return ToolFailure(ExitCode.ioError, "\(store): \(error)")
    }
}

/// Lines describing what opening the cache read-write did to the file, if anything: a damaged file moved
/// aside, or an old layout rebuilt.
func recoveryLines(_ report: SQLiteDatabase.OpenReport, store: String) -> [String] {
    var lines: [String] = []
    if let recovery = report.recovery {
        lines.append(
            "Recovery: \(store) was \(describe(recovery.reason)); it was moved aside to \(recovery.movedTo) "
                + "and an empty cache started in its place (the server has the messages).")
    } else if report.migratedFrom > 0, report.migratedFrom < report.migratedTo {
        lines.append(
            "Recovery: \(store) had the cache layout of version \(report.migratedFrom) (IDs in clear); "
                + "it was rebuilt empty as version \(report.migratedTo) and is refilled by this sync.")
    }
    return lines
}

/// Files an earlier recovery moved aside next to `store` (`<name>.corrupt-<time>`), oldest first.
func movedAsideFiles(beside store: String) -> [String] {
    let url = URL(fileURLWithPath: store)
    let directory = url.deletingLastPathComponent()
    let prefix = url.lastPathComponent + ".corrupt-"
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
    return names.filter { $0.hasPrefix(prefix) && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }.sorted()
        .map { directory.appendingPathComponent($0).path }
}

private func describe(_ reason: RecoveryReport.Reason) -> String {
    switch reason {
    case .notADatabase(let message): "not an SQLite database (\(message))"
    case .corrupt(let message): "damaged (\(message))"
    case .schemaTooNew(let found, let known): "written by a newer tidings (schema \(found), this one knows \(known))"
    case .migrationFailed(let version, let message): "not migratable to version \(version) (\(message))"
    }
}
