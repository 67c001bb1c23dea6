import Foundation
import TidingsYpChat

/// The YpChat sandbox's server state: express-style cookie sessions, feedback, countries,
/// partners and uploaded images. One actor, so REST handlers (and later the socket side) see
/// one consistent world.
///
/// Semantics (the plan's REST table, as the Android app expects it):
/// - A session is created by the first request without a valid `connect.sid` cookie that needs one
///   (`GET api/session`); the cookie is `s%3A<id>.sandbox`, like express-session's signed value.
/// - Feedback: anyone lists and posts (an empty message is 400); only a session that logged in as
///   admin with ``adminPassword`` may delete (403 otherwise, 404 for an unknown id).
/// - Uploads: the multipart field `image`, at most 5 × 1024 × 1024 bytes (413 beyond), answered
///   with a relative `/uploads/<n>` URL that serves the bytes back.
public actor YpChatSandboxState {
    /// One cookie session.
    public struct Session: Sendable, Equatable {
        /// The express session id (what `setSessionId` sends).
        public var id: String
        /// The user who logged in over the socket, if any.
        public var userName: String?
        /// Whether the session logged in as feedback admin.
        public var isAdmin = false
    }

    /// The password of `api/feedback/admin-login` (a sandbox value, not a secret).
    public nonisolated let adminPassword: String
    /// The countries `api/countries` lists, in this order.
    public nonisolated let countries: CountriesResponse
    /// The links `api/partners` lists.
    public nonisolated let partners: [PartnerLinkDto]

    private(set) var sessions: [String: Session] = [:]
    private var nextSession = 1
    private(set) var feedback: [FeedbackDto] = []
    private var nextFeedback = 1
    private var images: [String: (contentType: String, data: Data)] = [:]

    /// A state with sample countries (deliberately not alphabetical, to show the server's order)
    /// and partners.
    public init(
        adminPassword: String = "sandbox-admin",
        countries: CountriesResponse = CountriesResponse(entries: [
            .init(code: "DE", name: "Deutschland"), .init(code: "AT", name: "Österreich"),
            .init(code: "CH", name: "Schweiz"), .init(code: "BE", name: "Belgien"),
        ]),
        partners: [PartnerLinkDto] = [PartnerLinkDto(pageName: "Tidings", url: "https://example.org/tidings")]
    ) {
        self.adminPassword = adminPassword
        self.countries = countries
        self.partners = partners
    }

    /// The session named by a `connect.sid` cookie value, if it exists.
    public func session(cookie: String?) -> Session? {
        guard let id = Self.sessionID(cookie: cookie) else { return nil }
        return sessions[id]
    }

    /// The session with express session id `id`, if it exists.
    public func session(id: String) -> Session? { sessions[id] }

    /// A new session and its cookie value.
    func createSession() -> (Session, cookie: String) {
        let id = "sandbox-session-\(nextSession)"
        nextSession += 1
        let session = Session(id: id)
        sessions[id] = session
        return (session, "s%3A\(id).sandbox")
    }

    /// Ends session `id` (logout).
    func destroySession(id: String) { sessions[id] = nil }

    /// Sets the user of session `id` (the socket's `login`).
    public func setUser(_ userName: String?, session id: String) { sessions[id]?.userName = userName }

    func setAdmin(_ isAdmin: Bool, session id: String) { sessions[id]?.isAdmin = isAdmin }

    func addFeedback(name: String?, message: String) -> FeedbackDto {
        let entry = FeedbackDto(id: String(nextFeedback), name: name, message: message, createdAt: nil)
        nextFeedback += 1
        feedback.append(entry)
        return entry
    }

    /// Removes feedback `id`; false when there is none.
    func deleteFeedback(id: String) -> Bool {
        guard let index = feedback.firstIndex(where: { $0.id == id }) else { return false }
        feedback.remove(at: index)
        return true
    }

    /// Stores an image and returns its relative URL.
    func storeImage(_ data: Data, contentType: String) -> String {
        let name = "\(images.count + 1)"
        images[name] = (contentType, data)
        return "/uploads/\(name)"
    }

    func image(named name: String) -> (contentType: String, data: Data)? { images[name] }

    /// The session id inside a `connect.sid` value (`s%3A<id>.sandbox` or `s:<id>.sandbox`).
    static func sessionID(cookie: String?) -> String? {
        guard let value = cookie?.removingPercentEncoding, value.hasPrefix("s:"), value.hasSuffix(".sandbox") else {
            return nil
        }
        let id = value.dropFirst(2).dropLast(".sandbox".count)
        return id.isEmpty ? nil : String(id)
    }
}
