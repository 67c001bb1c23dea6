/// Reads a TZif file (RFC 8536: versions 1 to 4) into transitions, offsets and the footer's rule. Every count is
/// checked against the bytes that are really there before anything is read or allocated, with overflow-checked
/// arithmetic, so a hostile or truncated file is a ``ZoneInfoError``, never a trap or a large allocation.
///
/// Leap-second records are skipped: the files in `/usr/share/zoneinfo` have none (the `right/` variants do,
/// and their times would be read as if they had not).
struct TZifParser {
    /// What a file says about its zone.
    struct Rules: Sendable {
        var transitions: [Int64]
        /// The offset in force from each transition on, seconds east of UTC.
        var offsets: [Int64]
        /// Time type 0's offset: in force before the first transition (RFC 8536 §3.2).
        var initialOffset: Int64
        /// The footer's rule; nil for a version 1 file or an empty footer.
        var footer: POSIXZoneRule?
    }

    private struct Header {
        var version: UInt8
        var isUTCount: Int
        var isStandardCount: Int
        var leapCount: Int
        var transitionCount: Int
        var typeCount: Int
        var designationCount: Int
    }

    private var reader: ByteReader

    init(_ bytes: [UInt8]) { reader = ByteReader(bytes) }

    /// Offsets outside ±25:59:59 are refused (RFC 8536 §3.2 recommends −89999…93599).
    static let offsetRange: ClosedRange<Int64> = -89_999...93_599

    mutating func parse() throws(ZoneInfoError) -> Rules {
        let first = try header()
        // A version 2+ file repeats everything with 64-bit times after the version 1 block: skip that block.
        guard first.version >= UInt8(ascii: "2") else { return try block(first, timeSize: 4) }
        try reader.skip(try Self.blockLength(first, timeSize: 4))
        let second = try header()
        var rules = try block(second, timeSize: 8)
        rules.footer = try footer()
        return rules
    }

    private mutating func header() throws(ZoneInfoError) -> Header {
        guard reader.remaining >= 4 else { throw reader.remaining == 0 ? .notTZif : .truncated }
        guard try reader.take(4).elementsEqual("TZif".utf8) else { throw .notTZif }
        let version = try reader.byte()
        guard version == 0 || version >= UInt8(ascii: "2") && version <= UInt8(ascii: "9") else { throw .notTZif }
        try reader.skip(15)
        var counts: [Int] = []
        for _ in 0..<6 { counts.append(Int(try reader.uint32())) }
        let header = Header(
            version: version, isUTCount: counts[0], isStandardCount: counts[1], leapCount: counts[2],
            transitionCount: counts[3], typeCount: counts[4], designationCount: counts[5])
        guard header.typeCount >= 1, header.typeCount <= 256, header.designationCount >= 1,
            header.isUTCount == 0 || header.isUTCount == header.typeCount,
            header.isStandardCount == 0 || header.isStandardCount == header.typeCount
        else { throw .invalidCounts }
        return header
    }

    /// The bytes of one data block, overflow-checked (counts are 32-bit, so this cannot overflow on a 64-bit
    /// platform, but the check keeps it true everywhere).
    private static func blockLength(_ header: Header, timeSize: Int) throws(ZoneInfoError) -> Int {
        let parts: [(count: Int, size: Int)] = [
            (header.transitionCount, timeSize + 1), (header.typeCount, 6), (header.designationCount, 1),
            (header.leapCount, timeSize + 4), (header.isStandardCount, 1), (header.isUTCount, 1),
        ]
        var total = 0
        for part in parts {
            let (product, productOverflow) = part.count.multipliedReportingOverflow(by: part.size)
            let (sum, sumOverflow) = total.addingReportingOverflow(product)
            guard !productOverflow, !sumOverflow else { throw .truncated }
            total = sum
        }
        return total
    }

    private mutating func block(_ header: Header, timeSize: Int) throws(ZoneInfoError) -> Rules {
        guard try Self.blockLength(header, timeSize: timeSize) <= reader.remaining else { throw .truncated }
        var transitions: [Int64] = []
        transitions.reserveCapacity(header.transitionCount)
        for _ in 0..<header.transitionCount {
            let time = timeSize == 4 ? Int64(Int32(bitPattern: try reader.uint32())) : try reader.int64()
            if let last = transitions.last, time <= last { throw .invalidTransitions }
            transitions.append(time)
        }
        var typeIndices: [Int] = []
        typeIndices.reserveCapacity(header.transitionCount)
        for _ in 0..<header.transitionCount {
            let index = Int(try reader.byte())
            guard index < header.typeCount else { throw .invalidTransitions }
            typeIndices.append(index)
        }
        var typeOffsets: [Int64] = []
        for _ in 0..<header.typeCount {
            let offset = Int64(Int32(bitPattern: try reader.uint32()))
            let isDST = try reader.byte()
            let designation = Int(try reader.byte())
            guard Self.offsetRange.contains(offset), isDST <= 1, designation < header.designationCount else {
                throw .invalidTimeType
            }
            typeOffsets.append(offset)
        }
        try reader.skip(header.designationCount)
        try reader.skip(header.leapCount * (timeSize + 4))
        for _ in 0..<(header.isStandardCount + header.isUTCount) {
            guard try reader.byte() <= 1 else { throw .invalidTimeType }
        }
        return Rules(
            transitions: transitions.map(CivilTime.clamp), offsets: typeIndices.map { typeOffsets[$0] },
            initialOffset: typeOffsets[0], footer: nil)
    }

    /// `\n<POSIX TZ string>\n`; an empty string means no rule.
    private mutating func footer() throws(ZoneInfoError) -> POSIXZoneRule? {
        guard reader.remaining >= 2, try reader.byte() == 0x0A else { throw .invalidFooter }
        let rest = try reader.take(reader.remaining)
        guard let end = rest.firstIndex(of: 0x0A) else { throw .invalidFooter }
        let text = rest[rest.startIndex..<end]
        if text.isEmpty { return nil }
        do {
            return try POSIXZoneRule(parsing: text)
        } catch {
            throw .invalidFooter
        }
    }
}

/// Big-endian reads that check the remaining length first.
private struct ByteReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var remaining: Int { bytes.count - offset }

    mutating func take(_ count: Int) throws(ZoneInfoError) -> ArraySlice<UInt8> {
        guard count >= 0, count <= remaining else { throw .truncated }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    mutating func skip(_ count: Int) throws(ZoneInfoError) { _ = try take(count) }

    mutating func byte() throws(ZoneInfoError) -> UInt8 { try take(1).first ?? 0 }

    mutating func uint32() throws(ZoneInfoError) -> UInt32 {
        try take(4).reduce(0) { $0 << 8 | UInt32($1) }
    }

    mutating func int64() throws(ZoneInfoError) -> Int64 {
        Int64(bitPattern: try take(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }
}
