import Foundation
import TidingsCore
import TidingsNet

/// The REST side of YpChat (the Android app's `RestApi`): every endpoint of the plan, over
/// TidingsNet's `HTTPClient` with a cookie jar of its own.
///
/// Guarantees:
/// - Cookies the server sets (the express session's `connect.sid`) are kept in ``cookies`` and sent
///   back on every later request; the same jar is what the socket handshake reads, so REST and the
///   socket share one session. `HTTPCookieStorage.shared` is never touched.
/// - A status outside 2xx becomes ``YpChatError`` `unauthorized` (401, 403) or `status`, with the
///   server's message from the body (JSON `error`/`message`, or short plain text) in
///   ``YpChatError/message``; transport failures and timeouts become `transport` and `timedOut`;
///   cancellation stays `CancellationError`.
/// - The admin password goes only into the `admin-login` request body: never into a URL, a log
///   record or an error.
/// - An image over ``maximumImageBytes`` is refused before anything is sent.
public final class YpChatRESTClient: Sendable {
    /// The Android app's `MAX_IMAGE_BYTES`: 5 × 1024 × 1024 bytes.
    public static let maximumImageBytes = 5 * 1024 * 1024
    /// The cookie the express server keeps its session in.
    public static let sessionCookieName = "connect.sid"

    /// Sends one request and returns the response whatever its status (an `HTTPClient`'s
    /// `response(for:)`, or an in-process server's handler).
    public typealias Transport = @Sendable (HTTPRequest) async throws -> HTTPResponse

    /// The base URL and its settings.
    public let configuration: YpChatConfiguration
    /// This client's cookies (shared with the socket handshake).
    public let cookies: HTTPCookieJar
    private let transport: Transport

    /// A client for `configuration` with a fresh `HTTPClient` (and so an empty cookie jar).
    public convenience init(configuration: YpChatConfiguration, http: HTTPClient.Configuration = .init()) {
        let client = HTTPClient(configuration: http)
        self.init(configuration: configuration, cookies: client.cookies) { try await client.response(for: $0) }
    }

    /// A client whose requests `transport` carries; `transport` must send `cookies` and store the
    /// cookies responses set in it, as `HTTPClient` does (the sandbox's in-process client does).
    public init(configuration: YpChatConfiguration, cookies: HTTPCookieJar, transport: @escaping Transport) {
        self.configuration = configuration
        self.cookies = cookies
        self.transport = transport
    }

    /// `GET api/session`: the cookie session's state (creates the session and its cookie when
    /// there is none yet).
    public func session() async throws -> SessionDto {
        try await decode(SessionDto.self, HTTPRequest(url: configuration.url("api/session")), "GET api/session")
    }

    /// The express session id to send with `setSessionId`: the one `api/session` reported, or
    /// else the id inside the `connect.sid` cookie (`s:<id>.<signature>`); nil without a session.
    public func expressSessionID(from session: SessionDto? = nil) -> String? {
        if let id = session?.sessionId, !id.isEmpty { return id }
        guard
            let raw = cookies.all.first(where: { $0.name == Self.sessionCookieName })?.value,
            let value = raw.removingPercentEncoding
        else { return nil }
        let unsigned = value.hasPrefix("s:") ? value.dropFirst(2) : Substring(value)
        let id = unsigned.split(separator: ".", maxSplits: 1).first.map(String.init) ?? ""
        return id.isEmpty ? nil : id
    }

    /// `POST api/logout`: ends the server session, then forgets every cookie of this client.
    public func logout() async throws {
        defer { cookies.removeAll() }
        _ = try await send(HTTPRequest(method: .post, url: configuration.url("api/logout")), "POST api/logout")
    }

    /// `GET api/countries`, in the server's order.
    public func countries() async throws -> CountriesResponse {
        let response = try await send(HTTPRequest(url: configuration.url("api/countries")), "GET api/countries")
        return try CountriesResponse(json: response.body)
    }

    /// `GET api/feedback`.
    public func feedback() async throws -> [FeedbackDto] {
        try await decode([FeedbackDto].self, HTTPRequest(url: configuration.url("api/feedback")), "GET api/feedback")
    }

    /// `POST api/feedback` with `feedback` as JSON.
    public func sendFeedback(_ feedback: FeedbackRequest) async throws {
        let request = try HTTPRequest.json(.post, url: configuration.url("api/feedback"), body: feedback)
        _ = try await send(request, "POST api/feedback")
    }

    /// `GET api/feedback/admin-status`.
    public func feedbackAdminStatus() async throws -> FeedbackAdminStatusDto {
        let request = HTTPRequest(url: configuration.url("api/feedback/admin-status"))
        return try await decode(FeedbackAdminStatusDto.self, request, "GET api/feedback/admin-status")
    }

    /// `POST api/feedback/admin-login` with `{password}`; a wrong password is ``YpChatError``
    /// `unauthorized`. An empty 2xx body counts as logged in.
    public func adminLogin(password: String) async throws -> FeedbackAdminStatusDto {
        let request = try HTTPRequest.json(
            .post, url: configuration.url("api/feedback/admin-login"), body: ["password": password])
        let response = try await send(request, "POST api/feedback/admin-login")
        return response.body.isEmpty
            ? FeedbackAdminStatusDto(isAdmin: true)
            : try decodeBody(FeedbackAdminStatusDto.self, response, "POST api/feedback/admin-login")
    }

    /// `POST api/feedback/admin-logout`.
    public func adminLogout() async throws {
        let request = HTTPRequest(method: .post, url: configuration.url("api/feedback/admin-logout"))
        _ = try await send(request, "POST api/feedback/admin-logout")
    }

    /// `DELETE api/feedback/{id}` (admins only: others get ``YpChatError`` `unauthorized`).
    public func deleteFeedback(id: String) async throws {
        let segment = id.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? ""
        let request = HTTPRequest(method: .delete, url: configuration.url("api/feedback/\(segment)"))
        _ = try await send(request, "DELETE api/feedback/{id}")
    }

    /// `GET api/partners`.
    public func partners() async throws -> [PartnerLinkDto] {
        try await decode([PartnerLinkDto].self, HTTPRequest(url: configuration.url("api/partners")), "GET api/partners")
    }

    /// `POST api/upload-image`, the image in the multipart field `image`; returns the image's
    /// absolute URL (a relative answer gets the base URL in front).
    ///
    /// - Throws: ``YpChatError`` `imageTooLarge` for more than ``maximumImageBytes`` (checked before
    ///   sending), `decoding` when the answer has no usable URL, and the errors of every request.
    public func uploadImage(_ data: Data, filename: String = "image.jpg", contentType: String = "image/jpeg")
        async throws -> URL
    {
        guard data.count <= Self.maximumImageBytes else {
            throw YpChatError(
                .imageTooLarge, operation: "POST api/upload-image",
                message: "\(data.count) bytes, at most \(Self.maximumImageBytes)")
        }
        var form = MultipartFormData()
        form.addFile(name: "image", filename: filename, contentType: contentType, data: data)
        let request = HTTPRequest.multipart(url: configuration.url("api/upload-image"), form: form)
        let answer = try await decode(UploadImageResponse.self, request, "POST api/upload-image")
        guard let url = configuration.absoluteURL(answer.url) else {
            throw YpChatError(.decoding, operation: "POST api/upload-image", message: "unusable image URL")
        }
        return url
    }

    /// `GET url` with this client's cookies (a chat image on the server); at most
    /// ``maximumImageBytes``.
    ///
    /// - Throws: ``YpChatError`` `imageTooLarge` for a longer body, and the errors of every request.
    public func fetchImage(_ url: URL) async throws -> Data {
        let response = try await send(HTTPRequest(url: url), "GET image")
        guard response.body.count <= Self.maximumImageBytes else {
            throw YpChatError(.imageTooLarge, operation: "GET image", message: "\(response.body.count) bytes")
        }
        return response.body
    }

    private func decode<T: Decodable>(_ type: T.Type, _ request: HTTPRequest, _ operation: String) async throws -> T {
        try decodeBody(type, try await send(request, operation), operation)
    }

    private func decodeBody<T: Decodable>(_ type: T.Type, _ response: HTTPResponse, _ operation: String) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: response.body)
        } catch {
            throw YpChatError(.decoding, operation: operation, message: "the answer is not the expected JSON")
        }
    }

    /// Sends `request` and maps every failure to ``YpChatError`` (cancellation excepted).
    private func send(_ request: HTTPRequest, _ operation: String) async throws -> HTTPResponse {
        let response: HTTPResponse
        do {
            response = try await transport(request)
        } catch let error as HTTPError {
            let code: YpChatError.Code = error == .timedOut ? .timedOut : .transport
            throw YpChatError(code, operation: operation, message: error.underlyingDescription)
        }
        guard response.isSuccess else {
            let code: YpChatError.Code = response.status == 401 || response.status == 403 ? .unauthorized : .status
            throw YpChatError(
                code, operation: operation, status: response.status, message: Self.serverMessage(response.body))
        }
        return response
    }

    /// The message a YpChat error body carries: JSON `error` or `message`, or the body itself
    /// when it is short text (an HTML error page is not shown).
    package static func serverMessageForTests(_ body: Data) -> String? { serverMessage(body) }

    static func serverMessage(_ body: Data) -> String? {
        if let value = try? JSONValue(parsing: body) {
            return value["error"]?.stringValue ?? value["message"]?.stringValue
        }
        let text = String(decoding: body.prefix(300), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty, body.count <= 300, !text.hasPrefix("<") else { return nil }
        return text
    }
}
