/// An incremental UTF-8 validator, so a text message can be checked fragment by fragment and a
/// code point may span fragments (RFC 6455 §8.1, RFC 3629).
///
/// Feed it bytes with ``consume(_:)``; once it returned `false` the input is invalid for good.
/// ``isComplete`` says whether the bytes so far end on a character boundary.
public struct UTF8Validator: Sendable, Equatable {
    private var remaining = 0
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF
    private var failed = false

    /// Creates a validator at the start of a text.
    public init() {}

    /// Whether the bytes consumed so far end on a character boundary (and were valid).
    public var isComplete: Bool { !failed && remaining == 0 }

    /// Consumes more bytes; returns `false` as soon as they cannot be UTF-8.
    public mutating func consume(_ bytes: some Sequence<UInt8>) -> Bool {
        guard !failed else { return false }
        for byte in bytes {
            if remaining == 0 {
                switch byte {
                case 0x00...0x7F: continue
                case 0xC2...0xDF: expect(1, 0x80, 0xBF)
                case 0xE0: expect(2, 0xA0, 0xBF)
                case 0xE1...0xEC, 0xEE...0xEF: expect(2, 0x80, 0xBF)
                case 0xED: expect(2, 0x80, 0x9F)  // no UTF-16 surrogates
                case 0xF0: expect(3, 0x90, 0xBF)
                case 0xF1...0xF3: expect(3, 0x80, 0xBF)
                case 0xF4: expect(3, 0x80, 0x8F)  // nothing above U+10FFFF
                default:
                    failed = true
                    return false
                }
            } else {
                guard byte >= lower, byte <= upper else {
                    failed = true
                    return false
                }
                remaining -= 1
                lower = 0x80
                upper = 0xBF
            }
        }
        return true
    }

    private mutating func expect(_ count: Int, _ low: UInt8, _ high: UInt8) {
        remaining = count
        lower = low
        upper = high
    }
}
