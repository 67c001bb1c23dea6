import Foundation
import TidingsCore
import TidingsNet

/// What a Nextcloud server's notifications app offers for push (`capabilities.notifications.push` of
/// `GET /ocs/v2.php/cloud/capabilities`).
public struct NextcloudPushCapabilities: Sendable, Hashable {
    /// The raw list (`devices`, `object-data`, `delete`, `webpush`, `webpush-browsers`, …).
    public let push: Set<String>

    /// Creates capabilities from the list.
    public init(push: Set<String>) { self.push = push }

    /// Proxy pushes (push-v2): `devices`.
    public var supportsProxy: Bool { push.contains("devices") }
    /// Web Push enabled by the administrator: `webpush`.
    public var supportsWebPush: Bool { push.contains("webpush") }
    /// Silent withdrawals: `delete`.
    public var supportsDelete: Bool { push.contains("delete") }

    /// Reads the capabilities response; a server without the notifications app has an empty list.
    ///
    /// - Throws: `NextcloudPushError.malformedResponse` for a body that is not an OCS envelope.
    public init(capabilitiesResponse body: [UInt8]) throws(NextcloudPushError) {
        guard let value = try? JSONValue(parsing: body), let data = value["ocs"]?["data"], data.objectValue != nil
        else { throw NextcloudPushError(.malformedResponse, detail: "not an OCS JSON envelope", step: "server") }
        let list = data["capabilities"]?["notifications"]?["push"]?.arrayValue ?? []
        push = Set(list.compactMap(\.stringValue))
    }

    /// Fetches `GET /ocs/v2.php/cloud/capabilities` with the account's credentials.
    ///
    /// - Throws: `.unauthorized`, `.refused`, `.malformedResponse`, `.transport`.
    public static func fetch(
        serverURL: URL, credentials: NextcloudCredentials,
        send: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse
    ) async throws(NextcloudPushError) -> NextcloudPushCapabilities {
        let ocs = NextcloudOCSClient(serverURL: serverURL, credentials: credentials, send: send)
        let response = try await ocs.perform(ocs.request(.get, "ocs/v2.php/cloud/capabilities"), step: "server")
        guard response.status == 200 else { throw NextcloudOCSClient.refusal(response, step: "server") }
        return try NextcloudPushCapabilities(capabilitiesResponse: [UInt8](response.body))
    }
}
