/// A server's Mastodon API version, read from the instance's `version` string.
///
/// Mastodon sends `4.3.1` or `4.5.0-nightly.2025-07-11`; compatible servers send the Mastodon version they
/// imitate first (`2.7.2 (compatible; Pleroma 2.5.0)`). Only the leading `major.minor.patch` counts.
public struct MastodonVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The major version.
    public var major: Int
    /// The minor version.
    public var minor: Int
    /// The patch version.
    public var patch: Int

    /// A version.
    public init(_ major: Int, _ minor: Int, _ patch: Int = 0) {
        self.major = major
        self.minor = minor
        self.patch = patch
    }

    /// The leading `major[.minor[.patch]]` of `text`, or nil when it does not start with a number.
    /// Numbers are read digit by digit with a bound, so no input can overflow.
    public init?(parsing text: String) {
        var numbers: [Int] = []
        var current: Int?
        for byte in text.utf8 {
            if byte >= 0x30 && byte <= 0x39 {
                let digit = Int(byte - 0x30)
                let value = (current ?? 0)
                guard value < 100_000 else { return nil }
                current = value * 10 + digit
            } else if byte == 0x2E, let number = current, numbers.count < 2 {
                numbers.append(number)
                current = nil
            } else {
                break
            }
        }
        if let current { numbers.append(current) }
        guard let major = numbers.first else { return nil }
        self.init(major, numbers.count > 1 ? numbers[1] : 0, numbers.count > 2 ? numbers[2] : 0)
    }

    public static func < (lhs: MastodonVersion, rhs: MastodonVersion) -> Bool {
        (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
    }

    /// `major.minor.patch`.
    public var description: String { "\(major).\(minor).\(patch)" }
}
