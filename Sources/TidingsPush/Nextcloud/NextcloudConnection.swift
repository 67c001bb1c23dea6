import Foundation
import TidingsCore
import TidingsNet

/// Where an account's Nextcloud connection stands.
public enum NextcloudConnectionState: Sendable, Hashable {
    /// No credentials in use (signed out, or never connected).
    case disconnected
    /// Checking the credentials and the server's capabilities.
    case connecting
    /// The server accepted the credentials; its push capabilities are known.
    case connected(NextcloudPushCapabilities)
    /// The last attempt failed; `reason` is for the person (no secrets).
    case failed(reason: String)
}

/// One account's connection to its Nextcloud server (the credentials of a Nextcloud Social account's
/// server, used for push registration): ``connect()`` checks them by fetching the capabilities.
/// Safe to share between tasks; ``state`` is always the latest.
public final class NextcloudConnection: Sendable {
    /// The server's base URL.
    public let serverURL: URL
    /// The login; only ever sent in the `Authorization` header.
    public let credentials: NextcloudCredentials
    private let send: @Sendable (HTTPRequest) async throws -> HTTPResponse
    private let current = LockedState(NextcloudConnectionState.disconnected)

    /// Creates a disconnected connection that sends through `send`.
    public init(
        serverURL: URL, credentials: NextcloudCredentials,
        send: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse
    ) {
        self.serverURL = serverURL
        self.credentials = credentials
        self.send = send
    }

    /// A disconnected connection for what Login Flow v2 returned (its server and app password).
    public convenience init(login: NextcloudLogin, send: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse)
    {
        self.init(serverURL: login.serverURL, credentials: login.credentials, send: send)
    }

    /// The latest state.
    public var state: NextcloudConnectionState { current.withLock { $0 } }

    /// Connects: `.connecting`, then `.connected` with the capabilities or `.failed` with a reason.
    /// Returns the new state; never throws (the failure is the state).
    @discardableResult
    public func connect() async -> NextcloudConnectionState {
        current.withLock { $0 = .connecting }
        let next: NextcloudConnectionState
        do {
            next = .connected(
                try await NextcloudPushCapabilities.fetch(serverURL: serverURL, credentials: credentials, send: send))
        } catch {
            next = .failed(reason: Self.reason(error))
        }
        current.withLock { $0 = next }
        return next
    }

    /// Forgets the connection (sign-out).
    public func disconnect() { current.withLock { $0 = .disconnected } }

    private static func reason(_ error: NextcloudPushError) -> String {
        switch error {
        case .unauthorized: "The Nextcloud server refused the app password; sign in again."
        case .transport: "The Nextcloud server could not be reached."
        case .malformedResponse: "The server did not answer like a Nextcloud server."
        default: "The Nextcloud server refused the connection (\(error.status.map { "HTTP \($0)" } ?? "error"))."
        }
    }
}
