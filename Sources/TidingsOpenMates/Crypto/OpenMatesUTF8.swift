import Foundation

/// Text from bytes only when they are valid UTF-8, on every platform the package declares.
enum OpenMatesUTF8 {
    /// The bytes as text, or nil when they are not valid UTF-8. Decoding repairs ill-formed sequences, so the
    /// bytes survive it unchanged exactly when they were valid (`String(validating:as:)` says so directly but
    /// needs macOS 15 / iOS 18).
    static func text<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        return text.utf8.elementsEqual(bytes) ? text : nil
    }
}
