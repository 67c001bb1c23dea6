import Foundation
import Testing
import TidingsNet
import TidingsSandbox
import TidingsSandboxKit
import TidingsYpChat

/// The sandbox's REST semantics in process (no socket), through `SandboxHTTPServer.handle`.
@Suite(.timeLimit(.minutes(1))) struct YpChatSandboxRESTTests {
    let server = YpChatSandboxServer()

    func send(_ method: String, _ target: String, cookie: String? = nil, json: String? = nil) async
        -> SandboxHTTPResponse
    {
        var headers = HTTPHeaders()
        if let cookie { headers.add(name: "Cookie", value: "connect.sid=\(cookie)") }
        if json != nil { headers.add(name: "Content-Type", value: "application/json") }
        return await server.http.handle(
            SandboxHTTPRequest(method: method, target: target, headers: headers, body: Data((json ?? "").utf8)))
    }

    func cookie(of response: SandboxHTTPResponse) throws -> String {
        let field = try #require(response.headers.values(for: "Set-Cookie").first)
        let pair = try #require(field.split(separator: ";").first)
        #expect(pair.hasPrefix("connect.sid="))
        return String(pair.dropFirst("connect.sid=".count))
    }

    @Test func sessionIsCreatedOnceAndEndedByLogout() async throws {
        let first = await send("GET", "/api/session")
        let cookie = try cookie(of: first)
        let session = try JSONDecoder().decode(SessionDto.self, from: first.body)
        #expect(cookie == "s%3A\(try #require(session.sessionId)).sandbox")
        let again = await send("GET", "/api/session", cookie: cookie)
        #expect(again.headers.values(for: "Set-Cookie").isEmpty)
        #expect(try JSONDecoder().decode(SessionDto.self, from: again.body) == session)
        // A forged or unknown cookie gets a new session.
        let forged = await send("GET", "/api/session", cookie: "s%3Aother.sandbox")
        #expect(try JSONDecoder().decode(SessionDto.self, from: forged.body).sessionId != session.sessionId)
        let logout = await send("POST", "/api/logout", cookie: cookie)
        #expect(logout.headers.values(for: "Set-Cookie").first?.contains("Max-Age=0") == true)
        #expect(await server.state.session(cookie: cookie) == nil)
    }

    @Test func adminRulesAndErrorBodies() async throws {
        let cookie = try cookie(of: await send("GET", "/api/session"))
        #expect(await send("POST", "/api/feedback", json: #"{"message":"gut"}"#).status == 201)
        #expect(await send("POST", "/api/feedback", json: #"{"message":""}"#).status == 400)
        #expect(await send("POST", "/api/feedback", json: "not json").status == 400)
        let denied = await send("DELETE", "/api/feedback/1", cookie: cookie)
        #expect(denied.status == 403)
        #expect(String(decoding: denied.body, as: UTF8.self) == #"{"error":"admin only"}"#)
        #expect(await send("POST", "/api/feedback/admin-login", json: #"{"password":"sandbox-admin"}"#).status == 401)
        #expect(
            await send("POST", "/api/feedback/admin-login", cookie: cookie, json: #"{"password":"x"}"#).status == 401)
        #expect(
            await send("POST", "/api/feedback/admin-login", cookie: cookie, json: #"{"password":"sandbox-admin"}"#)
                .status == 200)
        #expect(await send("DELETE", "/api/feedback/2", cookie: cookie).status == 404)
        #expect(await send("DELETE", "/api/feedback/1", cookie: cookie).status == 200)
        #expect(await send("GET", "/api/feedback").body == Data("[]".utf8))
    }

    @Test func uploadNeedsTheImageFieldAndAtMostFiveMebibytes() async throws {
        func upload(_ field: String, _ size: Int) async -> SandboxHTTPResponse {
            var form = MultipartFormData()
            form.addFile(name: field, filename: "a.jpg", contentType: "image/jpeg", data: Data(count: size))
            return await server.http.handle(
                SandboxHTTPRequest(
                    method: "POST", target: "/api/upload-image", headers: ["Content-Type": form.contentType],
                    body: form.encoded()))
        }
        #expect(await upload("file", 10).status == 400)
        #expect(await upload("image", 5 * 1024 * 1024 + 1).status == 413)
        let stored = await upload("image", 5 * 1024 * 1024)
        #expect(try JSONDecoder().decode(UploadImageResponse.self, from: stored.body).url == "/uploads/1")
        #expect(await send("GET", "/uploads/1").body.count == 5 * 1024 * 1024)
    }
}
