/// A `SealedValue` is an encrypted column value made by ``ValueCipher``; it is stored as a blob.
///
/// Layout: a version byte (1), 8 bytes identifying the row it was sealed for, then AES-GCM's
/// `nonce ‖ ciphertext ‖ tag`. The row identifier only tells a misplaced value from a damaged one; the
/// binding itself is enforced by the authenticated associated data.
public struct SealedValue: Sendable, Equatable, DatabaseValueConvertible {
    /// The stored bytes.
    public let bytes: [UInt8]

    /// Wraps bytes read from storage; nothing is checked until ``ValueCipher/open(_:table:column:rowID:)``.
    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    public var databaseValue: DatabaseValue { .blob(bytes) }

    public init(databaseColumn column: DatabaseColumn) throws {
        guard column.storage == .blob else { throw column.mismatch("SealedValue") }
        self.bytes = column.bytes
    }

    static let version: UInt8 = 1
    static let bindingByteCount = 8
    static let overhead = 1 + bindingByteCount + AESGCM.nonceByteCount + AESGCM.tagByteCount
}

/// A `ValueCipher` encrypts column values at rest with AES-256-GCM under a key the app supplies.
///
/// Each value gets a fresh random nonce, and is bound to its place — table, column and row key — through the
/// associated data: a sealed value copied into another row, column or table fails to open with
/// ``StoreError/wrongRow``, and changed bytes fail with ``StoreError/tampered``. Opening never returns
/// unauthenticated bytes.
///
/// Give the same cipher in ``Database/Configuration/cipher`` and the store checks the key when it opens, so a
/// wrong key fails once with ``StoreError/wrongKey`` instead of value by value.
///
/// For example:
///
/// ```swift
/// let cipher = try ValueCipher(key: keyFromKeychain)
/// let sealed = try cipher.seal(Array(body.utf8), table: "outbox", column: "payload", rowID: id)
/// try db.execute("INSERT INTO outbox(id, payload) VALUES (?, ?)", [id, sealed])
/// let plain = try cipher.open(sealed, table: "outbox", column: "payload", rowID: id)
/// ```
public struct ValueCipher: Sendable {
    private let key: SymmetricKey

    /// Creates a cipher for a 256-bit key.
    ///
    /// - Throws: ``StoreError/misuse`` unless the key has 256 bits.
    public init(key: SymmetricKey) throws {
        guard key.bitCount == 256 else {
            throw StoreError.misuse("ValueCipher needs a 256-bit key, got \(key.bitCount)")
        }
        self.key = key
    }

    /// Encrypts `plaintext` for the value at (`table`, `column`, `rowID`).
    ///
    /// - Parameters:
    ///   - rowID: The row's primary key as stored (an `Int64`, `String`, …); the value opens only there.
    /// - Throws: ``StoreError/misuse`` when the crypto backend refuses the input (beyond 2 GiB).
    public func seal(
        _ plaintext: [UInt8], table: String, column: String, rowID: some DatabaseValueConvertible
    ) throws -> SealedValue {
        let binding = Self.associatedData(table: table, column: column, rowID: rowID.databaseValue)
        do {
            let box = try AESGCM.sealCombined(plaintext, key: key, authenticating: binding)
            return SealedValue(bytes: [SealedValue.version] + Self.bindingTag(binding) + box)
        } catch {
            throw StoreError(.misuse, message: "sealing failed: \(error)")
        }
    }

    /// Decrypts a value read from (`table`, `column`, `rowID`).
    ///
    /// - Returns: The plaintext, only when it authenticates for this place under this key.
    /// - Throws: ``StoreError/wrongRow`` when it was sealed for another place; ``StoreError/tampered`` when its
    ///   bytes were altered, truncated, or sealed under another key.
    public func open(
        _ sealed: SealedValue, table: String, column: String, rowID: some DatabaseValueConvertible
    ) throws -> [UInt8] {
        let bytes = sealed.bytes
        guard bytes.count >= SealedValue.overhead, bytes[0] == SealedValue.version else {
            throw StoreError(
                .tampered, message: "sealed value in \(table).\(column) is malformed (\(bytes.count) bytes)")
        }
        let binding = Self.associatedData(table: table, column: column, rowID: rowID.databaseValue)
        let tagEnd = 1 + SealedValue.bindingByteCount
        guard Array(bytes[1..<tagEnd]) == Self.bindingTag(binding) else {
            throw StoreError(.wrongRow, message: "sealed value in \(table).\(column) was sealed for another row")
        }
        do {
            return try AESGCM.openCombined(Array(bytes[tagEnd...]), key: key, authenticating: binding)
        } catch {
            throw StoreError(.tampered, message: "sealed value in \(table).\(column) failed authentication")
        }
    }

    /// Encrypts UTF-8 text; see ``seal(_:table:column:rowID:)``.
    public func seal(
        _ text: String, table: String, column: String, rowID: some DatabaseValueConvertible
    ) throws -> SealedValue {
        try seal(Array(text.utf8), table: table, column: column, rowID: rowID)
    }

    /// Decrypts UTF-8 text; see ``open(_:table:column:rowID:)``. Invalid UTF-8 is repaired, never trapped on.
    public func openString(
        _ sealed: SealedValue, table: String, column: String, rowID: some DatabaseValueConvertible
    ) throws -> String {
        String(decoding: try open(sealed, table: table, column: column, rowID: rowID), as: UTF8.self)
    }

    /// An unambiguous encoding of the value's place: length-prefixed parts, and the row key with its type.
    static func associatedData(table: String, column: String, rowID: DatabaseValue) -> [UInt8] {
        var data = Array("tidings.sealed.v1".utf8)
        func append(_ part: [UInt8]) {
            withUnsafeBytes(of: UInt32(part.count).bigEndian) { data.append(contentsOf: $0) }
            data.append(contentsOf: part)
        }
        append(Array(table.utf8))
        append(Array(column.utf8))
        switch rowID {
        case .null: append([0])
        case .integer(let value): append([1] + withUnsafeBytes(of: value.bigEndian) { Array($0) })
        case .real(let value): append([2] + withUnsafeBytes(of: value.bitPattern.bigEndian) { Array($0) })
        case .text(let value): append([3] + Array(value.utf8))
        case .blob(let value): append([4] + value)
        }
        return data
    }

    static func bindingTag(_ associatedData: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(associatedData).prefix(SealedValue.bindingByteCount))
    }

    // MARK: Key check

    static let metadataTable = "tidings_meta"
    private static let keyCheckName = "key_check"
    private static let keyCheckPlaintext = Array("tidings key check v1".utf8)

    /// A value sealed at the store's first open with a cipher; opening it later proves the key.
    func makeKeyCheck() throws -> SealedValue {
        try seal(Self.keyCheckPlaintext, table: Self.metadataTable, column: "value", rowID: Self.keyCheckName)
    }

    /// Throws ``StoreError/wrongKey`` unless the store's key check opens with this key. No check: no error.
    func verifyKey(in db: DatabaseConnection) throws {
        guard try db.tableExists(Self.metadataTable),
            let stored = try db.fetchOne(
                SealedValue.self, "SELECT value FROM tidings_meta WHERE name = ?", [Self.keyCheckName])
        else { return }
        let opened: [UInt8]
        do {
            opened = try open(stored, table: Self.metadataTable, column: "value", rowID: Self.keyCheckName)
        } catch StoreError.tampered {
            throw StoreError(.wrongKey, message: "the store was created with another key")
        }
        guard opened == Self.keyCheckPlaintext else {
            throw StoreError(.wrongKey, message: "the store's key check does not match")
        }
    }

    /// Records the key check when the store has none yet.
    func recordKey(in db: DatabaseConnection) throws {
        try db.execute(
            "INSERT OR IGNORE INTO tidings_meta(name, value) VALUES (?, ?)", [Self.keyCheckName, try makeKeyCheck()])
    }
}
