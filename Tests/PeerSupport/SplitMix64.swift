/// A small seeded generator, so "random" test data is the same on every run and a failing
/// pattern can be replayed from the seed in the message.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The generator's whole state: the seed, advanced once per value.
    public var state: UInt64

    /// A generator that yields the same sequence for the same seed.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
