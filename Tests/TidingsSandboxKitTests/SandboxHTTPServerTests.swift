import Foundation
import Testing
import TidingsNet
import TidingsSandboxKit

/// The HTTP server's routing and bodies, in process (no socket).
@Suite(.timeLimit(.minutes(1))) struct SandboxHTTPServerTests {
    let server = SandboxHTTPServer(router: SandboxTestRoutes.router())

    private func json<T: Decodable>(_ type: T.Type, _ response: SandboxHTTPResponse) throws -> T {
        try JSONDecoder().decode(type, from: response.payload)
    }

    @Test func routesByPathParametersAndQuery() async throws {
        let response = await server.handle(SandboxHTTPRequest(method: "get", target: "/api/v1/statuses/42?q=a%20b"))
        #expect(response.status == 200)
        #expect(try json([String: String].self, response) == ["id": "42", "q": "a b"])
    }

    @Test func unknownPathIs404AndWrongMethodIs405WithAllow() async throws {
        let missing = await server.handle(SandboxHTTPRequest(method: "GET", target: "/nope"))
        #expect(missing.status == 404)
        let wrong = await server.handle(SandboxHTTPRequest(method: "DELETE", target: "/api/v1/echo"))
        #expect(wrong.status == 405)
        #expect(wrong.headers["Allow"] == "POST")
    }

    @Test func jsonBodiesDecodeAndBadJSONIsATypedError() async throws {
        let good = await server.handle(
            SandboxHTTPRequest(method: "POST", target: "/api/v1/echo", body: Data(#"{"text":"hi","count":2}"#.utf8)))
        #expect(good.status == 201)
        #expect(try json(SandboxTestRoutes.Echo.self, good) == .init(text: "hi", count: 2))
        let bad = SandboxHTTPRequest(method: "POST", target: "/api/v1/echo", body: Data("{".utf8))
        let refused = #expect(throws: SandboxHTTPError.badBody) { try bad.json(SandboxTestRoutes.Echo.self) }
        #expect(refused?.detail == "the body is not Echo as JSON")
        #expect(await server.handle(bad).status == 400)
    }

    @Test func formAndMultipartBodies() async throws {
        let form = await server.handle(
            SandboxHTTPRequest(method: "POST", target: "/form", body: Data("a=1&b=x+y&c=%C3%A9".utf8)))
        #expect(try json([String: String].self, form) == ["a": "1", "b": "x y", "c": "é"])

        var multipart = MultipartFormData(boundary: "XyZ")
        multipart.addField(name: "status", value: "hello")
        multipart.addFile(
            name: "file", filename: "a.png", contentType: "image/png", data: Data(repeating: 7, count: 300))
        let request = HTTPRequest.multipart(url: URL(string: "http://x/upload")!, form: multipart)
        var headers = HTTPHeaders()
        for field in request.headers { headers.add(name: field.name, value: field.value) }
        let upload = await server.handle(
            SandboxHTTPRequest(method: "POST", target: "/upload", headers: headers, body: request.body ?? Data()))
        #expect(try json([String].self, upload) == ["status||5", "file|a.png|300"])

        let broken = await server.handle(
            SandboxHTTPRequest(
                method: "POST", target: "/upload", headers: ["Content-Type": "multipart/form-data; boundary=Q"],
                body: Data("--Q\r\nno head end".utf8)))
        #expect(broken.status == 400)
    }

    @Test func cookiesLinksAndRateLimitHeaders() async throws {
        let login = await server.handle(
            SandboxHTTPRequest(method: "POST", target: "/login", body: Data("user=ann".utf8)))
        #expect(login.headers["Set-Cookie"] == "session=s-ann; Path=/; HttpOnly")
        let me = await server.handle(
            SandboxHTTPRequest(method: "GET", target: "/me", headers: ["Cookie": "a=1; session=s-ann"]))
        #expect(try json([String: String].self, me) == ["session": "s-ann"])
        #expect(await server.handle(SandboxHTTPRequest(method: "GET", target: "/me")).status == 401)

        let timeline = await server.handle(
            SandboxHTTPRequest(method: "GET", target: "/timeline", headers: ["Host": "h"]))
        #expect(
            timeline.headers["Link"]
                == #"<http://h/timeline?max_id=1>; rel="next", <http://h/timeline?min_id=3>; rel="prev""#)
        #expect(timeline.headers["X-RateLimit-Remaining"] == "299")
        #expect(timeline.headers["X-RateLimit-Reset"] == "2030-03-17T17:46:40Z")
    }

    @Test func chunkedResponsesKeepTheirChunksAndJoinAsThePayload() async throws {
        let stream = await server.handle(SandboxHTTPRequest(method: "GET", target: "/stream"))
        #expect(stream.chunks?.count == 3)
        #expect(String(decoding: stream.payload, as: UTF8.self) == "first,second,third")
    }

    @Test func theLogRecordsEveryRequestWithoutItsQuery() async throws {
        _ = await server.handle(SandboxHTTPRequest(method: "GET", target: "/api/v1/statuses/7?access_token=secret"))
        _ = await server.handle(SandboxHTTPRequest(method: "POST", target: "/form", body: Data("a=1".utf8)))
        let entries = server.log.entries
        #expect(entries.count == 2)
        #expect(entries[0].path == "/api/v1/statuses/7")
        #expect(entries[0].status == 200)
        #expect(entries[1].bytesIn == 3)
        #expect(entries[1].bytesOut == 9)
        #expect(!entries.map(\.description).joined().contains("secret"))
    }
}
