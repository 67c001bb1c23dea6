import Foundation
import TidingsNet
import TidingsSandboxKit
import TidingsYpChat

extension YpChatSandboxServer {
    /// A REST client that reaches this server in process (no socket): requests go to ``http``'s
    /// `handle(_:)` with the client's cookies, and the cookies answers set are stored in its jar, as
    /// over the wire. A connection fault (drop, close) fails the request with `YpChatError`
    /// `transport`.
    ///
    /// `configuration`'s base URL only names the cookies' host and the URLs handed out; any base URL
    /// will do (`https://www.ypchat.net` by default).
    public func inProcessRESTClient(configuration: YpChatConfiguration? = nil) throws -> YpChatRESTClient {
        let configuration = try configuration ?? YpChatConfiguration()
        let cookies = HTTPCookieJar()
        let http = self.http
        return YpChatRESTClient(configuration: configuration, cookies: cookies) { request in
            var headers = HTTPHeaders()
            for (name, value) in request.headers { headers.add(name: name, value: value) }
            if let cookie = cookies.cookieHeader(for: request.url) { headers.add(name: "Cookie", value: cookie) }
            let target = request.url.path + (request.url.query.map { "?" + $0 } ?? "")
            let answer = await http.handle(
                SandboxHTTPRequest(
                    method: request.method.rawValue, target: target, headers: headers, body: request.body ?? Data()))
            try Task.checkCancellation()
            guard answer.connectionFault == nil else { throw YpChatError.transport }
            cookies.store(setCookieHeaders: answer.headers.values(for: "Set-Cookie"), from: request.url)
            return HTTPResponse(status: answer.status, headers: answer.headers, body: answer.payload, url: request.url)
        }
    }
}
