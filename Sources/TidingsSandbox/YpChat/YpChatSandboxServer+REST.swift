import Foundation
import TidingsSandboxKit
import TidingsYpChat

extension YpChatSandboxServer {
    /// The REST routes of the plan's table over `state`.
    static func restRouter(state: YpChatSandboxState) -> SandboxHTTPRouter {
        var router = SandboxHTTPRouter()
        router.add("GET", "/api/session") { request in
            if let session = await state.session(cookie: request.cookies[cookieName]) {
                return .json(
                    SessionDto(loggedIn: session.userName != nil, userName: session.userName, sessionId: session.id))
            }
            let (session, cookie) = await state.createSession()
            var response = SandboxHTTPResponse.json(SessionDto(loggedIn: false, sessionId: session.id))
            response.setCookie(cookieName, cookie)
            return response
        }
        router.add("POST", "/api/logout") { request in
            if let session = await state.session(cookie: request.cookies[cookieName]) {
                await state.destroySession(id: session.id)
            }
            var response = SandboxHTTPResponse.json(["ok": true])
            response.setCookie(cookieName, "", maxAge: 0)
            return response
        }
        router.add("GET", "/api/countries") { _ in
            SandboxHTTPResponse(
                status: 200, headers: ["Content-Type": "application/json"], body: state.countries.jsonData)
        }
        router.add("GET", "/api/partners") { _ in .json(state.partners) }
        router.add("GET", "/api/feedback") { _ in .json(await state.feedback) }
        router.add("POST", "/api/feedback") { request in
            guard let body = try? request.json(FeedbackRequest.self) else { return error("invalid JSON", 400) }
            let message = body.message.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !message.isEmpty else { return error("message required", 400) }
            return .json(await state.addFeedback(name: body.name, message: message), status: 201)
        }
        router.add("GET", "/api/feedback/admin-status") { request in
            let session = await state.session(cookie: request.cookies[cookieName])
            return .json(FeedbackAdminStatusDto(isAdmin: session?.isAdmin ?? false))
        }
        router.add("POST", "/api/feedback/admin-login") { request in
            guard let session = await state.session(cookie: request.cookies[cookieName]) else {
                return error("no session", 401)
            }
            guard let body = try? request.json([String: String].self), body["password"] == state.adminPassword else {
                return error("wrong password", 401)
            }
            await state.setAdmin(true, session: session.id)
            return .json(FeedbackAdminStatusDto(isAdmin: true))
        }
        router.add("POST", "/api/feedback/admin-logout") { request in
            if let session = await state.session(cookie: request.cookies[cookieName]) {
                await state.setAdmin(false, session: session.id)
            }
            return .json(FeedbackAdminStatusDto(isAdmin: false))
        }
        router.add("DELETE", "/api/feedback/:id") { request in
            guard let session = await state.session(cookie: request.cookies[cookieName]), session.isAdmin else {
                return error("admin only", 403)
            }
            let id = request.pathParameters["id"] ?? ""
            guard await state.deleteFeedback(id: id) else { return error("no such feedback", 404) }
            return .json(["ok": true])
        }
        router.add("POST", "/api/upload-image") { request in
            guard let parts = try? request.multipartParts(), let image = parts.first(where: { $0.name == "image" })
            else { return error("multipart field image required", 400) }
            guard image.data.count <= YpChatRESTClient.maximumImageBytes else { return error("image too large", 413) }
            let url = await state.storeImage(image.data, contentType: image.contentType ?? "application/octet-stream")
            return .json(UploadImageResponse(url: url))
        }
        router.add("GET", "/uploads/:name") { request in
            guard let image = await state.image(named: request.pathParameters["name"] ?? "") else {
                return error("not found", 404)
            }
            return SandboxHTTPResponse(status: 200, headers: ["Content-Type": image.contentType], body: image.data)
        }
        return router
    }

    /// An express-style error answer: `{"error": message}`.
    static func error(_ message: String, _ status: Int) -> SandboxHTTPResponse {
        .json(["error": message], status: status)
    }
}
