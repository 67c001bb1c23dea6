import TidingsCore

/// What a Nextcloud server said in one proxy push, once verified and decrypted (the subject JSON of
/// nextcloud/notifications' push-v2: a notification, or a silent withdrawal of one, several or all).
public enum NextcloudProxySubject: Sendable, Hashable {
    /// A new notification: `nid` identifies it on the server (`GET …/notifications/{nid}` has the rest);
    /// `type` and `id` name the object it is about when the server has the `object-data` capability.
    case notification(nid: Int64, app: String, subject: String, type: String?, id: String?)
    /// `{"delete": true, "nid": N}`: the notification was read or removed elsewhere.
    case delete(nid: Int64)
    /// `{"delete-multiple": true, "nids": [...]}`.
    case deleteMultiple(nids: [Int64])
    /// `{"delete-all": true}`: every notification of the account is gone.
    case deleteAll

    /// Largest `nids` list accepted, so a hostile subject cannot make the app withdraw without bound
    /// (one 256-byte RSA block holds far fewer anyway).
    public static let maximumNIDCount = 256

    /// Parses a decrypted subject.
    ///
    /// - Throws: `NextcloudPushError.malformedSubject` for anything but the four shapes: not JSON,
    ///   nested too deeply, a `nid` that is not a non-negative integer, an empty or missing `app`/`subject`.
    public init(decryptedJSON bytes: [UInt8]) throws(NextcloudPushError) {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: bytes, maximumDepth: 4)
        } catch {
            throw .malformedSubject("not JSON")
        }
        guard let object = value.objectValue else { throw .malformedSubject("not a JSON object") }
        if object["delete-all"]?.boolValue == true {
            self = .deleteAll
        } else if object["delete-multiple"]?.boolValue == true {
            guard let list = object["nids"]?.arrayValue else { throw .malformedSubject("delete-multiple without nids") }
            guard list.count <= Self.maximumNIDCount else { throw .malformedSubject("too many nids") }
            var nids: [Int64] = []
            for element in list {
                guard let nid = Self.nid(element) else { throw .malformedSubject("nids holds a non-identifier") }
                nids.append(nid)
            }
            self = .deleteMultiple(nids: nids)
        } else if object["delete"]?.boolValue == true {
            guard let nid = object["nid"].flatMap(Self.nid) else { throw .malformedSubject("delete without nid") }
            self = .delete(nid: nid)
        } else {
            guard let nid = object["nid"].flatMap(Self.nid) else { throw .malformedSubject("notification without nid") }
            guard let app = object["app"]?.stringValue, !app.isEmpty else {
                throw .malformedSubject("notification without app")
            }
            guard let subject = object["subject"]?.stringValue else {
                throw .malformedSubject("notification without subject")
            }
            self = .notification(
                nid: nid, app: app, subject: subject, type: object["type"]?.stringValue,
                id: object["id"]?.identifierValue)
        }
    }

    /// A notification identifier: a JSON integer from 0 up (servers send numbers; a few send digits).
    private static func nid(_ value: JSONValue) -> Int64? {
        switch value {
        case .int(let number) where number >= 0: number
        case .string(let digits) where !digits.isEmpty && digits.count <= 18 && digits.allSatisfy(\.isASCIIDigit):
            Int64(digits)
        default: nil
        }
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
