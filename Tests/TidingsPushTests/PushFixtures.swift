import Foundation
import PeerSupport
import TidingsCore

@testable import TidingsPush

/// The JSON fixtures of Tests/TidingsPushTests/Fixtures (each says where it came from).
enum PushFixtures {
    static func json(_ name: String) throws -> JSONValue {
        guard let url = Bundle.module.url(forResource: "Fixtures/\(name)", withExtension: nil) else {
            throw FixtureMissing(name: name)
        }
        return try JSONValue(parsing: Data(contentsOf: url))
    }

    struct FixtureMissing: Error { let name: String }

    /// The base64url field `key` of `entry`, decoded.
    static func bytes(_ entry: JSONValue, _ key: String) throws -> [UInt8] {
        guard case .string(let text)? = entry[key] else { throw FixtureMissing(name: key) }
        return try WebPushBase64URL.decode(text)
    }

    static func string(_ entry: JSONValue, _ key: String) throws -> String {
        guard case .string(let text)? = entry[key] else { throw FixtureMissing(name: key) }
        return text
    }
}

/// Fresh subscription keys; a failure to make them fails the test that asked.
func freshKeys() throws -> WebPushSubscriptionKeys { try WebPushSubscriptionKeys.generate() }

/// `count` pseudo-random bytes from `random` (PeerSupport's SplitMix64, so a failing case can be replayed).
func randomBytes(_ count: Int, _ random: inout SplitMix64) -> [UInt8] {
    (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &random) }
}
