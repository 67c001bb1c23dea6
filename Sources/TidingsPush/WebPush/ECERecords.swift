import TidingsCore

/// The record layer of encrypted content encoding: RFC 8188 (`aes128gcm`) and its draft predecessor
/// (`aesgcm`), given the content-encryption key and the base nonce.
///
/// Lengths from the wire are only compared and subtracted where the comparison has already proven the result
/// non-negative, so no input traps.
enum ECERecords {
    static let tagByteCount = TidingsCrypto.AESGCM.tagByteCount

    /// The smallest `aes128gcm` record size RFC 8188 §2.1 allows: a tag, a delimiter and one octet.
    static let minimumAES128GCMRecordSize = 18
    /// The smallest `aesgcm` record size: the two-byte padding length and one octet (as http_ece).
    static let minimumAESGCMRecordSize = 3

    /// The nonce of record `index`: the base nonce with the big-endian index XORed into its last eight bytes.
    static func nonce(_ base: [UInt8], index: Int) -> [UInt8] {
        var nonce = base
        var counter = UInt64(index)
        for position in stride(from: 11, through: 4, by: -1) {
            nonce[position] ^= UInt8(truncatingIfNeeded: counter)
            counter >>= 8
        }
        return nonce
    }

    static func open(_ record: ArraySlice<UInt8>, key: TidingsCrypto.SymmetricKey, nonce: [UInt8], index: Int)
        throws(WebPushError) -> [UInt8]
    {
        let split = record.endIndex - tagByteCount
        do {
            return try TidingsCrypto.AESGCM.open(
                Array(record[record.startIndex..<split]), tag: Array(record[split...]), key: key, nonce: nonce)
        } catch CryptoError.authenticationFailure {
            throw .with(.authenticationFailure, "tag does not verify (altered, or other keys)", record: index)
        } catch {
            throw .with(.platformFailure, "\(error)", record: index)
        }
    }

    static func seal(_ plaintext: [UInt8], key: TidingsCrypto.SymmetricKey, nonce: [UInt8]) throws(WebPushError)
        -> [UInt8]
    {
        do {
            let sealed = try TidingsCrypto.AESGCM.seal(plaintext, key: key, nonce: nonce)
            return sealed.ciphertext + sealed.tag
        } catch {
            throw .with(.platformFailure, "\(error)")
        }
    }

    // MARK: aes128gcm (RFC 8188)

    /// Decrypts the records after an `aes128gcm` header.
    ///
    /// Each record but the last is exactly `recordSize` long and ends its plaintext with the delimiter 0x01;
    /// the last (up to `recordSize` long) ends with 0x02; zeros after the delimiter are padding. A content of
    /// no records at all decrypts to nothing, as http_ece writes an empty message (it authenticates nothing,
    /// like a push without a payload).
    static func openAES128GCM(
        _ content: ArraySlice<UInt8>, key: TidingsCrypto.SymmetricKey, nonce base: [UInt8], recordSize: Int
    ) throws(WebPushError) -> [UInt8] {
        var plaintext: [UInt8] = []
        plaintext.reserveCapacity(content.count)
        var offset = content.startIndex
        var index = 0
        while offset < content.endIndex {
            let remaining = content.endIndex - offset
            let isLast = remaining <= recordSize
            let length = isLast ? remaining : recordSize
            guard length > tagByteCount else {
                throw .with(.truncatedRecord, "\(length) bytes cannot hold a tag and a delimiter", record: index)
            }
            let record = content[offset..<(offset + length)]
            var data = try open(record, key: key, nonce: nonce(base, index: index), index: index)
            guard let delimiterIndex = data.lastIndex(where: { $0 != 0 }) else {
                throw .with(.badDelimiter, "no delimiter (a record of zeros)", record: index)
            }
            let delimiter = data[delimiterIndex]
            if isLast, delimiter != 2 {
                let reason =
                    delimiter == 1 ? "the message ends without its last record" : "last record delimiter is not 0x02"
                throw .with(delimiter == 1 ? .truncatedRecord : .badDelimiter, reason, record: index)
            }
            if !isLast, delimiter != 1 {
                throw .with(.badDelimiter, "record delimiter is not 0x01", record: index)
            }
            data.removeSubrange(delimiterIndex...)
            plaintext += data
            offset += length
            index += 1
        }
        return plaintext
    }

    /// Encrypts `plaintext` into `aes128gcm` records of `recordSize` (at least 18): as many full records as
    /// needed, the last one marked 0x02; an empty plaintext gives one record holding only the delimiter.
    static func sealAES128GCM(
        _ plaintext: [UInt8], key: TidingsCrypto.SymmetricKey, nonce base: [UInt8], recordSize: Int
    ) throws(WebPushError) -> [UInt8] {
        let chunk = recordSize - tagByteCount - 1
        var output: [UInt8] = []
        var start = 0
        var index = 0
        repeat {
            let end = min(start + chunk, plaintext.count)
            let isLast = end == plaintext.count
            output += try seal(
                Array(plaintext[start..<end]) + [isLast ? 2 : 1], key: key, nonce: nonce(base, index: index))
            start = end
            index += 1
        } while start < plaintext.count
        return output
    }

    // MARK: aesgcm (draft-ietf-httpbis-encryption-encoding-03)

    /// Decrypts `aesgcm` records: each `recordSize + 16` bytes of ciphertext but the last, which must be
    /// shorter (a message that ends on a record boundary was truncated); each plaintext starts with a two-byte
    /// big-endian padding length and that many zeros.
    static func openAESGCM(
        _ content: ArraySlice<UInt8>, key: TidingsCrypto.SymmetricKey, nonce base: [UInt8], recordSize: Int
    ) throws(WebPushError) -> [UInt8] {
        // recordSize ≤ UInt32.max, so adding the tag cannot overflow.
        let chunk = recordSize + tagByteCount
        guard content.count % chunk != 0 else {
            throw .with(.truncatedRecord, "the message ends on a record boundary (truncated)")
        }
        var plaintext: [UInt8] = []
        plaintext.reserveCapacity(content.count)
        var offset = content.startIndex
        var index = 0
        while offset < content.endIndex {
            let length = min(chunk, content.endIndex - offset)
            guard length >= tagByteCount + 2 else {
                throw .with(.truncatedRecord, "\(length) bytes cannot hold a tag and a padding length", record: index)
            }
            let data = try open(
                content[offset..<(offset + length)], key: key, nonce: nonce(base, index: index), index: index)
            let padding = Int(data[0]) << 8 | Int(data[1])
            guard padding <= data.count - 2 else {
                throw .with(.badPadding, "padding length runs past the record", record: index)
            }
            guard data[2..<(2 + padding)].allSatisfy({ $0 == 0 }) else {
                throw .with(.badPadding, "padding is not all zeros", record: index)
            }
            plaintext += data[(2 + padding)...]
            offset += length
            index += 1
        }
        return plaintext
    }

    /// Encrypts `plaintext` into `aesgcm` records of `recordSize` plaintext bytes (at least 3), each with a
    /// zero padding length; the last record is always shorter than a full one.
    static func sealAESGCM(
        _ plaintext: [UInt8], key: TidingsCrypto.SymmetricKey, nonce base: [UInt8], recordSize: Int
    ) throws(WebPushError) -> [UInt8] {
        let chunk = recordSize - 2
        var output: [UInt8] = []
        var start = 0
        var index = 0
        // `<=`: a plaintext that fills its last record exactly is followed by one that holds only the padding
        // length, so the last record is never full.
        while start <= plaintext.count {
            let end = min(start + chunk, plaintext.count)
            output += try seal([0, 0] + plaintext[start..<end], key: key, nonce: nonce(base, index: index))
            start += chunk
            index += 1
        }
        return output
    }
}
