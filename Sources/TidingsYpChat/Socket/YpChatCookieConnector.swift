import Foundation
import TidingsNet

/// Opens Engine.IO sessions with the REST client's cookies in the handshake's `Cookie` header.
///
/// Why a connector of its own: the cookie jar changes after `GET api/session` and on logout, so the
/// header is read from the jar at every connect and reconnect rather than fixed once in the
/// Engine.IO configuration. The cookies sent are those the jar would send to the base URL. Another
/// kind of connector (one that is not an `EngineIOClientConnector`) is used as it is.
struct YpChatCookieConnector: EngineIOConnector {
    let base: any EngineIOConnector
    let cookies: HTTPCookieJar
    let cookieURL: URL

    func connect() async throws -> any EngineIOSession {
        guard var connector = base as? EngineIOClientConnector else { return try await base.connect() }
        connector.configuration.headers["Cookie"] = cookies.cookieHeader(for: cookieURL)
        return try await connector.connect()
    }
}
