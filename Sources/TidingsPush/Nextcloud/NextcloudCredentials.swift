import Foundation

/// A Nextcloud login (user and app password) sent only as an `Authorization: Basic` header, never in a
/// URL or a log: its `description` shows the user alone.
public struct NextcloudCredentials: Sendable, Hashable, CustomStringConvertible {
    /// The login name.
    public let user: String
    /// The app password (a device token from Login Flow v2); push registration refuses real passwords.
    public let appPassword: String

    /// Creates credentials.
    public init(user: String, appPassword: String) {
        self.user = user
        self.appPassword = appPassword
    }

    /// The `Authorization` header value.
    var authorizationHeader: String { "Basic " + Data("\(user):\(appPassword)".utf8).base64EncodedString() }

    /// The user only; never the password.
    public var description: String { "NextcloudCredentials(user: \(user), appPassword: redacted)" }
}
