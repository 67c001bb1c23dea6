import Foundation
import TidingsCore

/// A read position saved on the server (`Marker`): the last read ID of a timeline, with the version
/// the server bumps on every save (a stale version makes `POST /api/v1/markers` answer 409).
public struct MastodonMarker: Codable, Hashable, Sendable {
    /// The last read status (home) or notification (notifications).
    public var lastReadID: ServerID
    /// The server's version of the marker; 0 when the server did not send one.
    public var version: Int
    /// When it was last saved.
    @MastodonDateCoding public var updatedAt: Date?

    enum CodingKeys: String, CodingKey {
        case version
        case lastReadID = "last_read_id"
        case updatedAt = "updated_at"
    }

    /// A marker, e.g. to compare with the server's.
    public init(lastReadID: ServerID, version: Int, updatedAt: Date? = nil) {
        self.lastReadID = lastReadID
        self.version = version
        self.updatedAt = updatedAt
    }

    /// Decodes leniently: only a missing `last_read_id` fails.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        lastReadID = try container.decode(ServerID.self, forKey: .lastReadID)
        version = container.lenient(Int.self, .version) ?? 0
        _updatedAt = container.date(.updatedAt)
    }
}

/// The answer of `GET`/`POST /api/v1/markers`: a marker per timeline the server knows of.
public struct MastodonMarkers: Codable, Hashable, Sendable {
    /// The Home timeline's marker.
    public var home: MastodonMarker?
    /// The notifications' marker.
    public var notifications: MastodonMarker?

    enum CodingKeys: String, CodingKey { case home, notifications }

    /// Markers for the two timelines.
    public init(home: MastodonMarker? = nil, notifications: MastodonMarker? = nil) {
        self.home = home
        self.notifications = notifications
    }

    /// Decodes leniently: a missing or malformed marker is nil.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        home = container.lenient(MastodonMarker.self, .home)
        notifications = container.lenient(MastodonMarker.self, .notifications)
    }
}
