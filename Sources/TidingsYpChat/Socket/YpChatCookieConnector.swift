import Foundation
import TidingsNet

/// Opens Engine.IO sessions with the REST client's cookies in the handshake's `Cookie` header.
///
/// Why a connector of its own: the cookie jar changes after `GET api/session` and on logout, so the
/// header is read from the jar at every connect and reconnect rather than fixed once in the
/// Engine.IO configuration. The cookies sent are those the jar would send to the base URL.
struct YpChatCookieConnector: EngineIOConnector {
    let base: EngineIOClientConnector
    let cookies: HTTPCookieJar
    let cookieURL: URL

    func connect() async throws -> any EngineIOSession {
        var connector = base
        connector.configuration.headers["Cookie"] = cookies.cookieHeader(for: cookieURL)
        return try await connector.connect()
    }
}
