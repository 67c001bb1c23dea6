import Foundation
import TidingsCore
import TidingsPush

/// Feeds arbitrary bytes to the two Login Flow v2 answers a server sends, `NextcloudLoginFlowSession(flowResponse:
/// serverURL:)` and `NextcloudLogin(pollResponse:serverURL:)`, for an `https` server. Refusals are typed by
/// construction; what is accepted must keep its promises: the login page and the poll endpoint on the server's host
/// over `https`, a token of 1 to 1024 bytes; a login on `https` with a user of 1 to 256 bytes and an app password of
/// 1 to 1024 — and it must read back the same from the JSON a server would send for it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = [UInt8](UnsafeBufferPointer(start: data, count: count))
    let server = URL(string: "https://cloud.example.org")!
    if let session = try? NextcloudLoginFlowSession(flowResponse: bytes, serverURL: server) {
        for url in [session.loginURL, session.pollEndpoint]
        where url.host?.lowercased() != "cloud.example.org" || url.scheme?.lowercased() != "https" || url.port != nil {
            fatalError("accepted \(url.absoluteString) for https://cloud.example.org")
        }
        if session.pollToken.isEmpty || session.pollToken.utf8.count > 1024 {
            fatalError("accepted a token of \(session.pollToken.utf8.count) bytes")
        }
        let json: JSONValue = .object([
            "poll": .object([
                "token": .string(session.pollToken), "endpoint": .string(session.pollEndpoint.absoluteString),
            ]),
            "login": .string(session.loginURL.absoluteString),
        ])
        guard let again = try? NextcloudLoginFlowSession(flowResponse: [UInt8](json.jsonData()), serverURL: server),
            again == session
        else { fatalError("\(session) did not survive a round trip") }
    }
    if let login = try? NextcloudLogin(pollResponse: bytes, serverURL: server) {
        let user = login.credentials.user.utf8.count
        let password = login.credentials.appPassword.utf8.count
        if login.serverURL.scheme?.lowercased() != "https" || user == 0 || user > 256 || password == 0
            || password > 1024
        {
            fatalError("accepted \(login)")
        }
        let json: JSONValue = .object([
            "server": .string(login.serverURL.absoluteString), "loginName": .string(login.credentials.user),
            "appPassword": .string(login.credentials.appPassword),
        ])
        guard let again = try? NextcloudLogin(pollResponse: [UInt8](json.jsonData()), serverURL: server),
            again == login
        else { fatalError("\(login) did not survive a round trip") }
    }
    return 0
}
