import Foundation
import TidingsCore
import TidingsKecalek

/// Feeds arbitrary bytes to everything that reads a Kecalek frame from the network: the inbound
/// envelope (responses and notifications), the JSON value (which must survive an encode/parse round
/// trip), message decoding inside a page, and the tolerant timestamp parser.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Data(bytes: data, count: count)
    _ = try? KecalekInbound(frame: bytes)
    if let json = try? JSONValue(parsing: bytes) {
        let again = try? JSONValue(parsing: json.jsonData(sortedKeys: true))
        if again != json {
            fatalError("JSONValue did not survive a round trip: \(json)")
        }
        if case .array(let items) = json["data"]?["messages"] ?? json {
            for item in items { _ = try? KecalekWireMessage(json: item, conversationID: "c") }
        } else {
            _ = try? KecalekWireMessage(json: json, conversationID: nil)
        }
    }
    if let text = String(data: bytes, encoding: .utf8), let stamp = KecalekTimestamp(text) {
        _ = stamp.adding(.seconds(1))
    }
    return 0
}
