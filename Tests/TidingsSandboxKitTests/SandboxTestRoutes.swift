import Foundation
import TidingsNet
import TidingsSandboxKit

/// The routes the kit's tests serve: one of each kind of body and header a backend's sandbox needs.
enum SandboxTestRoutes {
    struct Echo: Codable, Equatable {
        var text: String
        var count: Int
    }

    static func router() -> SandboxHTTPRouter {
        var router = SandboxHTTPRouter()
        router.add("GET", "/api/v1/statuses/:id") { request in
            .json(["id": request.pathParameters["id"] ?? "", "q": request.queryValue("q") ?? ""])
        }
        router.add("POST", "/api/v1/echo") { request in
            do { return .json(try request.json(Echo.self), status: 201) } catch {
                return .text(String(describing: error), status: 400)
            }
        }
        router.add("POST", "/form") { request in
            .json(Dictionary(request.formFields.map { ($0.name, $0.value) }, uniquingKeysWith: { $1 }))
        }
        router.add("POST", "/upload") { request in
            do {
                let parts = try request.multipartParts()
                return .json(parts.map { "\($0.name)|\($0.filename ?? "")|\($0.data.count)" })
            } catch { return .text(String(describing: error), status: 400) }
        }
        router.add("POST", "/login") { request in
            let user = request.formFields.first { $0.name == "user" }?.value ?? "nobody"
            var response = SandboxHTTPResponse.json(["user": user])
            response.setCookie("session", "s-\(user)")
            return response
        }
        router.add("GET", "/me") { request in
            guard let session = request.cookies["session"] else { return .text("no session", status: 401) }
            return .json(["session": session])
        }
        router.add("GET", "/timeline") { request in
            var response = SandboxHTTPResponse.json([1, 2, 3])
            let base = "http://\(request.headers["Host"] ?? "127.0.0.1")"
            response.addLinks([
                (rel: "next", url: URL(string: "\(base)/timeline?max_id=1")!),
                (rel: "prev", url: URL(string: "\(base)/timeline?min_id=3")!),
            ])
            response.addRateLimit(limit: 300, remaining: 299, reset: Date(timeIntervalSince1970: 1_900_000_000))
            return response
        }
        router.add("GET", "/stream") { _ in
            var response = SandboxHTTPResponse(status: 200, headers: ["Content-Type": "text/plain"])
            response.chunks = [Data("first,".utf8), Data("second,".utf8), Data("third".utf8)]
            return response
        }
        router.add("GET", "/big") { _ in .text(String(repeating: "x", count: 10_000)) }
        return router
    }
}
