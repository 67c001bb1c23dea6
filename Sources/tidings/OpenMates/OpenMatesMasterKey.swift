import Foundation
import TidingsCore

/// Where `tidings openmates show` finds the user's master key, never on the command line: a file named by
/// `--master-key-file` (or `TIDINGS_OPENMATES_MASTER_KEY_FILE`), else the `TIDINGS_OPENMATES_MASTER_KEY`
/// environment variable. Either holds the key as base64 (16 or 32 bytes); a file may instead hold the raw bytes.
enum OpenMatesMasterKeySource: Sendable, Equatable {
    /// The environment variable holding the key itself (base64).
    static let environmentVariable = "TIDINGS_OPENMATES_MASTER_KEY"

    /// A file holding the key.
    case file(String)
    /// The key's base64 text from the environment (never printed).
    case environment(String)

    /// The source `file` or the environment name, or nil when neither is given.
    static func resolve(file: String?, environment: [String: String]) -> OpenMatesMasterKeySource? {
        if let file { return .file(file) }
        if let text = environment[environmentVariable], !text.isEmpty { return .environment(text) }
        return nil
    }

    /// Reads the key; the errors name the source, never its content.
    ///
    /// - Throws: `ToolFailure` with 66 for a file that is missing or unreadable, 65 for content that is not a
    ///   16- or 32-byte key.
    func load() throws -> TidingsCrypto.SymmetricKey {
        let bytes: [UInt8]
        let origin: String
        switch self {
        case .file(let path):
            origin = "The master key file \(path)"
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ToolFailure(ExitCode.noInput, "\(origin) does not exist or cannot be read.")
            }
            let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if let decoded = Data(base64Encoded: text), [16, 32].contains(decoded.count) {
                bytes = [UInt8](decoded)
            } else {
                bytes = [UInt8](data)
            }
        case .environment(let text):
            origin = "\(Self.environmentVariable)"
            bytes = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)).map { [UInt8]($0) } ?? []
        }
        do {
            return try TidingsCrypto.SymmetricKey(bytes: bytes)
        } catch {
            throw ToolFailure(
                ExitCode.dataError, "\(origin) does not hold a master key (base64 of 16 or 32 bytes).")
        }
    }
}
