import Foundation

/// The checks of the `FuzzMastodonWire` fuzz target, shared with the unit test that replays its seeds.
@_spi(Fuzzing) public enum MastodonWireFuzzing {
    /// Decodes `body` as every Mastodon wire type the engine reads from a server (statuses, notifications,
    /// grouped notifications, markers, instances, unread counts; as one value and as a lossy list).
    ///
    /// - Returns: How many of those decodings succeeded.
    /// - Throws: The first error that is not a ``MastodonError`` (a decoder must fail only with its typed error).
    public static func decodeEverything(_ body: Data) throws -> Int {
        var decoded = 0
        func attempt(_ decode: () throws -> Void) throws {
            do {
                try decode()
                decoded += 1
            } catch is MastodonError {
            }
        }
        try attempt { _ = try MastodonWire.decode(MastodonStatus.self, from: body) }
        try attempt { _ = try MastodonWire.decodeList(MastodonStatus.self, from: body) }
        try attempt { _ = try MastodonWire.decode(MastodonNotification.self, from: body) }
        try attempt { _ = try MastodonWire.decodeList(MastodonNotification.self, from: body) }
        try attempt { _ = try MastodonWire.decode(MastodonGroupedNotifications.self, from: body) }
        try attempt { _ = try MastodonWire.decode(MastodonMarker.self, from: body) }
        try attempt { _ = try MastodonWire.decode(MastodonMarkers.self, from: body) }
        try attempt { _ = try MastodonWire.decode(MastodonInstanceV2.self, from: body) }
        try attempt { _ = try MastodonWire.decode(MastodonInstanceV1.self, from: body) }
        try attempt { _ = try MastodonWire.decode(MastodonUnreadCount.self, from: body) }
        return decoded
    }
}
