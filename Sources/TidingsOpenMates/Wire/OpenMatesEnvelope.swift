import Foundation
import TidingsCore

/// One OpenMates WebSocket message: `{"type": …, "payload": {…}}`, the same shape in both directions.
///
/// Decoding is lenient where the real server is: a missing `payload`, a `null` one, or a body sent under
/// `data` instead of `payload` all read as an empty object (the server's own handler does the same).
///
/// For example:
/// ```swift
/// let ping = OpenMatesEnvelope(type: "ping")
/// try await socket.send(text: ping.text)
/// ```
public struct OpenMatesEnvelope: Sendable, Hashable {
    /// The event or request name (`phased_sync_request`, `phase_2_last_20_chats_ready`, …).
    public var type: String
    /// The event's fields; always an object.
    public var payload: [String: JSONValue]

    /// Creates an envelope.
    public init(type: String, payload: [String: JSONValue] = [:]) {
        self.type = type
        self.payload = payload
    }

    /// The deepest JSON nesting a frame may have; deeper frames are refused before any field is read.
    public static let maximumDepth = 64

    /// Reads one frame's JSON text.
    ///
    /// - Throws: ``OpenMatesError/malformedFrame`` when the text is not JSON, nests deeper than
    ///   ``maximumDepth``, is not an object, or has no string `type`. The error names only the frame's
    ///   size: a frame may carry secrets.
    public init(frame: some Collection<UInt8>) throws(OpenMatesError) {
        let json: JSONValue
        do {
            json = try JSONValue(parsing: frame, maximumDepth: Self.maximumDepth)
        } catch {
            throw OpenMatesError.malformedFrame("not JSON (\(frame.count) bytes)")
        }
        guard let members = json.objectValue else { throw OpenMatesError.malformedFrame("not an object") }
        guard let type = members["type"]?.stringValue, !type.isEmpty else {
            throw OpenMatesError.malformedFrame("no type")
        }
        self.type = type
        self.payload = members["payload"]?.objectValue ?? [:]
    }

    /// Reads one frame's JSON text; see ``init(frame:)``.
    public init(text: String) throws(OpenMatesError) {
        try self.init(frame: Array(text.utf8))
    }

    /// The frame's compact JSON text, keys sorted so equal envelopes encode equally.
    public var text: String {
        JSONValue.object(["type": .string(type), "payload": .object(payload)]).jsonString(sortedKeys: true)
    }
}
