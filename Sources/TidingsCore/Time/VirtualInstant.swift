/// A `VirtualInstant` is a point on a virtual clock (``TestClock``, ``ImmediateClock``): the virtual
/// time elapsed since the clock was made.
public struct VirtualInstant: InstantProtocol, Sendable, Hashable, CustomStringConvertible {
    /// Time since the clock's origin.
    public var offset: Duration

    /// The instant `offset` after the clock's origin.
    public init(offset: Duration) { self.offset = offset }

    public func advanced(by duration: Duration) -> VirtualInstant { VirtualInstant(offset: offset + duration) }
    public func duration(to other: VirtualInstant) -> Duration { other.offset - offset }
    public static func < (lhs: VirtualInstant, rhs: VirtualInstant) -> Bool { lhs.offset < rhs.offset }
    public var description: String { "VirtualInstant(\(offset))" }
}
