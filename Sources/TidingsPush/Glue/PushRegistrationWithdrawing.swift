import Foundation
import TidingsCore

/// A push registration that can be withdrawn at sign-out: the push server's subscription (Mastodon's
/// `DELETE /api/v1/push/subscription`), a push proxy's device, or a distributor's endpoint.
///
/// ``MastodonNotificationRaiser/signOut(alsoWithdrawing:)`` calls every registration it was given; one that fails does not stop
/// the others, and the local state is deleted all the same (the failure is reported).
public protocol PushRegistrationWithdrawing: Sendable {
    /// A short name for reports (`mastodon`, `nextcloud-proxy`, `unifiedpush`); never a secret.
    var registrationName: String { get }

    /// Withdraws the registration and deletes what it keeps locally (keys).
    ///
    /// - Throws: Whatever the registration's client throws; the caller reports it and goes on.
    func withdrawRegistration() async throws
}

extension MastodonWebPushRegistrar: PushRegistrationWithdrawing {
    /// `mastodon`.
    public nonisolated var registrationName: String { "mastodon" }

    /// ``signOut()``: `DELETE /api/v1/push/subscription`, then the keys and row are deleted locally.
    ///
    /// - Throws: ``PushRegistrationWithdrawalError`` when the server could not be told (the keys are deleted
    ///   all the same), `StoreError` when the row could not be deleted.
    public func withdrawRegistration() async throws {
        if case .failed(let reason) = try await signOut() {
            throw PushRegistrationWithdrawalError.serverNotTold(registrationName, reason: reason)
        }
    }
}

extension NextcloudWebPushRegistrar: PushRegistrationWithdrawing {
    /// `nextcloud-webpush`.
    public var registrationName: String { "nextcloud-webpush" }

    /// ``unregister()``: `DELETE …/api/v2/webpush`.
    ///
    /// - Throws: `NextcloudPushError`.
    public func withdrawRegistration() async throws { try await unregister() }
}

/// A Nextcloud push-proxy registration to withdraw at sign-out (the server's, then the proxy's device).
public struct NextcloudProxyWithdrawal: PushRegistrationWithdrawing {
    /// The registrar that made it.
    public var registrar: NextcloudProxyRegistrar
    /// The registration to delete.
    public var registration: NextcloudProxyRegistration

    /// A withdrawal of `registration` through `registrar`.
    public init(registrar: NextcloudProxyRegistrar, registration: NextcloudProxyRegistration) {
        self.registrar = registrar
        self.registration = registration
    }

    /// `nextcloud-proxy`.
    public var registrationName: String { "nextcloud-proxy" }

    /// `NextcloudProxyRegistrar.unregister(_:)`: at the server, then at the proxy.
    ///
    /// - Throws: `NextcloudPushError`.
    public func withdrawRegistration() async throws { try await registrar.unregister(registration) }
}

/// A push registration could not be withdrawn at its server.
public struct PushRegistrationWithdrawalError: TidingsError {
    enum Code: String { case serverNotTold }

    let code: Code
    /// The registration's name.
    public let registration: String
    /// Why (no secret).
    public let reason: String

    /// The server did not confirm the deletion.
    public static func serverNotTold(_ registration: String, reason: String) -> PushRegistrationWithdrawalError {
        PushRegistrationWithdrawalError(code: .serverNotTold, registration: registration, reason: reason)
    }
    /// For matching any such error.
    public static let serverNotTold = PushRegistrationWithdrawalError(
        code: .serverNotTold, registration: "", reason: "")

    /// The kind.
    public var kind: TidingsErrorKind { TidingsErrorKind(code) }
    /// The registration and the reason.
    public var description: String { "PushRegistrationWithdrawalError.serverNotTold(\(registration): \(reason))" }
}
