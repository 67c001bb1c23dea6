import TidingsCore
import TidingsPush

/// Feeds arbitrary bytes to `NextcloudProxySubject(decryptedJSON:)`, the parser of a decrypted Nextcloud proxy
/// push. It may refuse only with `NextcloudPushError` (typed throws make anything else impossible to compile);
/// what it accepts must keep its promises (identifiers from 0 up, at most `maximumNIDCount` of them, an `app`
/// that is not empty) and must parse back to the same value from the JSON a server would send for it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = [UInt8](UnsafeBufferPointer(start: data, count: count))
    guard let subject = try? NextcloudProxySubject(decryptedJSON: bytes) else { return 0 }
    let json: JSONValue
    switch subject {
    case .notification(let nid, let app, let text, let type, let id):
        if nid < 0 || app.isEmpty { fatalError("accepted nid \(nid), app \(app.debugDescription)") }
        var object: [String: JSONValue] = ["nid": .int(nid), "app": .string(app), "subject": .string(text)]
        if let type { object["type"] = .string(type) }
        if let id { object["id"] = .string(id) }
        json = .object(object)
    case .delete(let nid):
        if nid < 0 { fatalError("accepted delete of nid \(nid)") }
        json = .object(["delete": .bool(true), "nid": .int(nid)])
    case .deleteMultiple(let nids):
        if nids.count > NextcloudProxySubject.maximumNIDCount || nids.contains(where: { $0 < 0 }) {
            fatalError("accepted \(nids.count) nids")
        }
        json = .object(["delete-multiple": .bool(true), "nids": .array(nids.map { .int($0) })])
    case .deleteAll:
        json = .object(["delete-all": .bool(true)])
    }
    guard let again = try? NextcloudProxySubject(decryptedJSON: [UInt8](json.jsonData())), again == subject else {
        fatalError("\(subject) did not survive a round trip through the JSON a server sends")
    }
    return 0
}
