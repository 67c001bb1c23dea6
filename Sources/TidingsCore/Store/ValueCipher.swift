/// A `SealedValue` is an encrypted column value made by ``ValueCipher``; it is stored as a blob.
///
/// Layout: a format byte, 8 bytes identifying the row it was sealed for, then AES-GCM's
/// `nonce ‖ ciphertext ‖ tag`. The row identifier only tells a misplaced value from a damaged one; the
/// binding itself is enforced by the authenticated associated data.
///
/// Format 2 (written now) makes the row identifier an HMAC-SHA256 under a key derived from the store key, so
/// someone holding the file cannot test guesses of row keys (phone numbers, message IDs) offline. Format 1
/// (written before) used a plain SHA-256 of the place; such values still open, and are rewritten as format 2
/// whenever the app seals them again.
public struct SealedValue: Sendable, Equatable, SQLiteValueConvertible {
    /// The stored bytes.
    public let bytes: [UInt8]

    /// Wraps bytes read from storage; nothing is checked until ``ValueCipher/open(_:table:column:rowID:)``.
    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    public var databaseValue: SQLiteValue { .blob(bytes) }

    public init(databaseColumn column: SQLiteColumn) throws {
        guard column.storage == .blob else { throw column.mismatch("SealedValue") }
        self.bytes = column.bytes
    }

    /// The format written now: keyed row tag, version in the associated data.
    static let version: UInt8 = 2
    /// The first format: unkeyed row tag; read, never written.
    static let legacyVersion: UInt8 = 1
    static let bindingByteCount = 8
    static let overhead = 1 + bindingByteCount + TidingsCrypto.AESGCM.nonceByteCount + TidingsCrypto.AESGCM.tagByteCount
}

/// A `ValueCipher` encrypts column values at rest with AES-256-GCM under a key the app supplies.
///
/// Each value gets a fresh random nonce, and is bound to its place — table, column and row key — through the
/// associated data: a sealed value copied into another row, column or table fails to open with
/// ``StoreError/wrongRow``, and changed bytes fail with ``StoreError/tampered``. Opening never returns
/// unauthenticated bytes.
///
/// Give the same cipher in ``SQLiteDatabase/Configuration/cipher`` and the store checks the key when it opens, so a
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
    private let key: TidingsCrypto.SymmetricKey
    /// The HMAC key of format-2 row tags, derived from `key` so the tag reveals nothing without it.
    let rowTagKey: [UInt8]
    /// `rowTagKey` padded to SHA-256's block and XORed with HMAC's inner and outer pads, computed once: a tag
    /// then costs two plain hashes, as cheap as sealing needs (RFC 2104; equal to `TidingsCrypto.HMACSHA256`).
    private let innerPad: [UInt8]
    private let outerPad: [UInt8]

    /// Creates a cipher for a 256-bit key.
    ///
    /// - Throws: ``StoreError/misuse`` unless the key has 256 bits.
    public init(key: TidingsCrypto.SymmetricKey) throws {
        guard key.bitCount == 256 else {
            throw StoreError.misuse("ValueCipher needs a 256-bit key, got \(key.bitCount)")
        }
        self.key = key
        // HKDF with a fixed label: a 256-bit key goes in, so this cannot fail; the fallback is unreachable.
        self.rowTagKey =
            (try? TidingsCrypto.HKDF.deriveKey(
                inputKeyMaterial: key.bytes, info: Array("tidings.sealed.row-tag".utf8), outputByteCount: 32))
            ?? TidingsCrypto.SHA256.hash(key.bytes + Array("tidings.sealed.row-tag".utf8))
        let block = rowTagKey + [UInt8](repeating: 0, count: 64 - rowTagKey.count)
        self.innerPad = block.map { $0 ^ 0x36 }
        self.outerPad = block.map { $0 ^ 0x5C }
    }

    /// Encrypts `plaintext` for the value at (`table`, `column`, `rowID`).
    ///
    /// - Parameters:
    ///   - plaintext: The value's bytes.
    ///   - table: The table the value is stored in; it opens in no other.
    ///   - column: The column the value is stored in; it opens in no other.
    ///   - rowID: The row's primary key as stored (an `Int64`, `String`, …); the value opens only there.
    /// - Throws: ``StoreError/misuse`` when the crypto backend refuses the input (beyond 2 GiB).
    public func seal(
        _ plaintext: [UInt8], table: String, column: String, rowID: some SQLiteValueConvertible
    ) throws -> SealedValue {
        let binding = Self.associatedData(
            version: SealedValue.version, table: table, column: column, rowID: rowID.databaseValue)
        do {
            let box = try TidingsCrypto.AESGCM.sealCombined(plaintext, key: key, authenticating: binding)
            return SealedValue(bytes: [SealedValue.version] + bindingTag(binding, version: SealedValue.version) + box)
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
        _ sealed: SealedValue, table: String, column: String, rowID: some SQLiteValueConvertible
    ) throws -> [UInt8] {
        let bytes = sealed.bytes
        guard bytes.count >= SealedValue.overhead,
            bytes[0] == SealedValue.version || bytes[0] == SealedValue.legacyVersion
        else {
            throw StoreError(
                .tampered, message: "sealed value in \(table).\(column) is malformed (\(bytes.count) bytes)")
        }
        let version = bytes[0]
        let binding = Self.associatedData(version: version, table: table, column: column, rowID: rowID.databaseValue)
        let tagEnd = 1 + SealedValue.bindingByteCount
        guard Array(bytes[1..<tagEnd]) == bindingTag(binding, version: version) else {
            throw StoreError(.wrongRow, message: "sealed value in \(table).\(column) was sealed for another row")
        }
        do {
            return try TidingsCrypto.AESGCM.openCombined(Array(bytes[tagEnd...]), key: key, authenticating: binding)
        } catch {
            throw StoreError(.tampered, message: "sealed value in \(table).\(column) failed authentication")
        }
    }

    /// Encrypts UTF-8 text; see ``seal(_:table:column:rowID:)``.
    public func seal(
        _ text: String, table: String, column: String, rowID: some SQLiteValueConvertible
    ) throws -> SealedValue {
        try seal(Array(text.utf8), table: table, column: column, rowID: rowID)
    }

    /// Decrypts UTF-8 text; see ``open(_:table:column:rowID:)``. Invalid UTF-8 is repaired, never trapped on.
    public func openString(
        _ sealed: SealedValue, table: String, column: String, rowID: some SQLiteValueConvertible
    ) throws -> String {
        String(decoding: try open(sealed, table: table, column: column, rowID: rowID), as: UTF8.self)
    }

    /// An unambiguous encoding of the value's place: length-prefixed parts, and the row key with its type.
    /// The format is part of it, so a format-2 value relabelled as format 1 does not open.
    static func associatedData(version: UInt8, table: String, column: String, rowID: SQLiteValue) -> [UInt8] {
        var data = Array((version == SealedValue.legacyVersion ? "tidings.sealed.v1" : "tidings.sealed.v2").utf8)
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

    /// The row tag: keyed for format 2; a plain hash for format 1, kept only to read old values.
    func bindingTag(_ associatedData: [UInt8], version: UInt8) -> [UInt8] {
        let digest =
            version == SealedValue.legacyVersion
            ? TidingsCrypto.SHA256.hash(associatedData)
            : TidingsCrypto.SHA256.hash(outerPad + TidingsCrypto.SHA256.hash(innerPad + associatedData))
        return Array(digest.prefix(SealedValue.bindingByteCount))
    }

    // MARK: Key check

    static let metadataTable = "tidings_meta"
    private static let keyCheckName = "key_check"
    private static let keyIDName = "key_id"
    private static let keyCheckPlaintext = Array("tidings key check v1".utf8)

    /// A value sealed at the store's first open with a cipher; opening it later proves the key.
    func makeKeyCheck() throws -> SealedValue {
        try seal(Self.keyCheckPlaintext, table: Self.metadataTable, column: "value", rowID: Self.keyCheckName)
    }

    /// 16 bytes that identify the key without revealing it (an HMAC under a derived key). Stored beside the
    /// key check, it tells a damaged key check (the identifier matches) from a wrong key (it does not).
    var keyIdentifier: [UInt8] {
        Array(
            TidingsCrypto.HMACSHA256.authenticationCode(for: Array("tidings key id v1".utf8), key: rowTagKey).prefix(16)
        )
    }

    /// Checks the store's key check against this key. No key check: no error.
    ///
    /// - Throws: ``StoreError/wrongKey`` when the key check does not open and the stored key identifier is
    ///   another key's (or, in a store written before identifiers, absent: then the two cannot be told apart);
    ///   ``StoreError/damagedKeyCheck`` when it does not open, or is malformed, while the identifier is this
    ///   key's.
    func verifyKey(in db: SQLiteConnection) throws {
        guard try db.tableExists(Self.metadataTable),
            let stored = try db.fetchOne(
                SealedValue.self, "SELECT value FROM tidings_meta WHERE name = ?", [Self.keyCheckName])
        else { return }
        let malformed =
            stored.bytes.count < SealedValue.overhead
            || (stored.bytes[0] != SealedValue.version && stored.bytes[0] != SealedValue.legacyVersion)
        let opened: [UInt8]
        do {
            opened = try open(stored, table: Self.metadataTable, column: "value", rowID: Self.keyCheckName)
        } catch let error as StoreError where error == .tampered || error == .wrongRow {
            throw try keyCheckFailure(db, malformed: malformed)
        }
        guard opened == Self.keyCheckPlaintext else {
            throw try keyCheckFailure(db, malformed: true)
        }
    }

    /// Why the key check did not open: decided by the stored key identifier.
    private func keyCheckFailure(_ db: SQLiteConnection, malformed: Bool) throws -> StoreError {
        let storedID = try? db.fetchOne(
            [UInt8].self, "SELECT value FROM tidings_meta WHERE name = ?", [Self.keyIDName])
        if let storedID {
            guard constantTimeEqual(storedID, keyIdentifier) else {
                return StoreError(.wrongKey, message: "the store was created with another key")
            }
            return StoreError(
                .damagedKeyCheck, message: "the store's key check is damaged; the key is the right one")
        }
        // No identifier (a store from before they were recorded): a malformed record cannot come from another
        // key, but one that fails authentication could be either, and the safe answer leaves the file alone.
        return malformed
            ? StoreError(.damagedKeyCheck, message: "the store's key check is malformed")
            : StoreError(.wrongKey, message: "the store was created with another key (or its key check is damaged)")
    }

    /// Records the key check and the key identifier when the store has none yet.
    func recordKey(in db: SQLiteConnection) throws {
        try db.execute(
            "INSERT OR IGNORE INTO tidings_meta(name, value) VALUES (?, ?)", [Self.keyCheckName, try makeKeyCheck()])
        try db.execute(
            "INSERT OR IGNORE INTO tidings_meta(name, value) VALUES (?, ?)", [Self.keyIDName, keyIdentifier])
    }
}
