/// The ID that correlates a request with its response; on the wire, its decimal text.
public struct RequestID: Hashable, Sendable, CustomStringConvertible {
    /// The number.
    public let rawValue: UInt64

    /// Wraps a number.
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }

    /// Reads an ID a response echoed, or nil when the text is not one this layer issued.
    public init?(wire text: String) {
        guard let value = UInt64(text), String(value) == text else { return nil }
        self.rawValue = value
    }

    /// The decimal text sent on the wire.
    public var description: String { String(rawValue) }
}

/// Issues request IDs in increasing order within a range, wrapping at its end and skipping IDs that a
/// pending request still holds, so a late response can never be matched to the wrong request.
struct RequestIDSequence {
    let range: ClosedRange<UInt64>
    private var next: UInt64

    init(range: ClosedRange<UInt64>) {
        self.range = range
        self.next = range.lowerBound
    }

    /// The next free ID, or nil when every ID in the range is taken.
    mutating func take(isTaken: (UInt64) -> Bool, taken count: Int) -> RequestID? {
        // A range wider than Int can never be full: `count` is bounded by memory.
        if let size = Int(exactly: range.upperBound - range.lowerBound), count > size { return nil }
        while true {
            let candidate = next
            next = candidate == range.upperBound ? range.lowerBound : candidate + 1
            if !isTaken(candidate) { return RequestID(candidate) }
        }
    }
}
