import Foundation
import TidingsCore
import TidingsNet

/// Registers one device of one Nextcloud account for pushes through a push proxy (nextcloud/notifications
/// push-v2): first at the server (`POST /ocs/v2.php/apps/notifications/api/v2/push`), then, when the server
/// answers 201, at the proxy (`POST {proxyServer}/devices`); signing out deletes at both.
///
/// Credentials travel only in the `Authorization` header; URLs carry no secret.
public struct NextcloudProxyRegistrar: Sendable {
    /// Sends one request and returns the response whatever its status (`HTTPClient.response(for:)`,
    /// or an in-process sandbox in tests).
    public typealias Send = @Sendable (HTTPRequest) async throws -> HTTPResponse

    /// The Nextcloud server's base URL (`https://cloud.example.org`, with its sub-path if any).
    public let serverURL: URL
    /// The account's login.
    public let credentials: NextcloudCredentials
    private let send: Send

    /// Creates a registrar that sends through `send`.
    public init(serverURL: URL, credentials: NextcloudCredentials, send: @escaping Send) {
        self.serverURL = serverURL
        self.credentials = credentials
        self.send = send
    }

    /// Creates a registrar over TidingsNet's `HTTPClient`.
    public init(serverURL: URL, credentials: NextcloudCredentials, client: HTTPClient) {
        self.init(serverURL: serverURL, credentials: credentials) { try await client.response(for: $0) }
    }

    /// The `cloudId` the proxy asks for on a 409: `user@server` without the scheme.
    var cloudID: String {
        let host = serverURL.host ?? ""
        let port = serverURL.port.map { ":\($0)" } ?? ""
        let path = serverURL.path == "/" ? "" : serverURL.path
        return "\(credentials.user)@\(host)\(port)\(path)"
    }

    /// Registers `deviceKey` and `pushToken` (APNs or FCM token) with the server and, when needed, the proxy.
    ///
    /// A server answer of 200 means it already knew this token and key: nothing goes to the proxy. After a
    /// 201 the token is sent to the proxy; a 409 there is retried once with `cloudId`, as the protocol says.
    ///
    /// - Throws: `NextcloudPushError.unauthorized` (401), `.refused` with the step, status and OCS
    ///   message (`INVALID_PUSHTOKEN_HASH`, `INVALID_SESSION_TOKEN`, …), `.malformedResponse`, `.transport`.
    public func register(pushToken: String, deviceKey: NextcloudDeviceKey, proxyServer: URL)
        async throws(NextcloudPushError) -> NextcloudProxyRegistration
    {
        let body: JSONValue = .object([
            "pushTokenHash": .string(NextcloudProxyRegistration.pushTokenHash(pushToken)),
            "devicePublicKey": .string(deviceKey.publicKeyPEM),
            "proxyServer": .string(proxyServer.absoluteString),
        ])
        let response = try await perform(serverRequest(.post, body: body), step: "server")
        guard response.status == 200 || response.status == 201 else { throw refusal(response, step: "server") }
        let data = try NextcloudOCSClient.ocsData(response)
        guard let publicKey = data["publicKey"]?.stringValue, let identifier = data["deviceIdentifier"]?.stringValue,
            let signature = data["signature"]?.stringValue
        else { throw NextcloudPushError(.malformedResponse, detail: "push registration without keys", step: "server") }
        let registration = NextcloudProxyRegistration(
            userPublicKey: publicKey, deviceIdentifier: identifier, signature: signature, proxyServer: proxyServer)
        if response.status == 201 { try await registerAtProxy(registration, pushToken: pushToken) }
        return registration
    }

    private func registerAtProxy(_ registration: NextcloudProxyRegistration, pushToken: String)
        async throws(NextcloudPushError)
    {
        var fields: [String: JSONValue] = [
            "pushToken": .string(pushToken), "deviceIdentifier": .string(registration.deviceIdentifier),
            "deviceIdentifierSignature": .string(registration.signature),
            "userPublicKey": .string(registration.userPublicKey),
        ]
        var response = try await perform(proxyRequest(.post, registration, body: .object(fields)), step: "proxy")
        if response.status == 409 {
            fields["cloudId"] = .string(cloudID)
            response = try await perform(proxyRequest(.post, registration, body: .object(fields)), step: "proxy")
        }
        guard response.status == 200 else { throw refusal(response, step: "proxy") }
    }

    /// Signs the device out: deletes the registration at the server, then at the proxy.
    ///
    /// The server's 200 (it knew no token) and 202 (deleted) both count as done; the proxy's 200 (deleted)
    /// and 403 (it no longer knows this device) too, so signing out twice succeeds.
    ///
    /// - Throws: as ``register(pushToken:deviceKey:proxyServer:)``; the proxy is still tried when only
    ///   the server failed, and the first failure is thrown.
    public func unregister(_ registration: NextcloudProxyRegistration) async throws(NextcloudPushError) {
        var failure: NextcloudPushError?
        do {
            let response = try await perform(serverRequest(.delete, body: nil), step: "server")
            if response.status != 200 && response.status != 202 { failure = refusal(response, step: "server") }
        } catch {
            failure = error
        }
        let body: JSONValue = .object([
            "deviceIdentifier": .string(registration.deviceIdentifier),
            "deviceIdentifierSignature": .string(registration.signature),
            "userPublicKey": .string(registration.userPublicKey),
        ])
        do {
            let response = try await perform(proxyRequest(.delete, registration, body: body), step: "proxy")
            if response.status != 200 && response.status != 403 && failure == nil {
                failure = refusal(response, step: "proxy")
            }
        } catch {
            if failure == nil { failure = error }
        }
        if let failure { throw failure }
    }

    // MARK: Requests

    private var ocs: NextcloudOCSClient {
        NextcloudOCSClient(serverURL: serverURL, credentials: credentials, send: send)
    }

    private func serverRequest(_ method: HTTPMethod, body: JSONValue?) -> HTTPRequest {
        ocs.request(method, "ocs/v2.php/apps/notifications/api/v2/push", body: body)
    }

    /// Proxy requests carry no Nextcloud credentials: the proxy is another party.
    private func proxyRequest(_ method: HTTPMethod, _ registration: NextcloudProxyRegistration, body: JSONValue)
        -> HTTPRequest
    {
        var request = HTTPRequest(
            method: method, url: registration.proxyServer.appendingPathComponent("devices"), body: body.jsonData())
        request.headers["Content-Type"] = "application/json"
        return request
    }

    private func perform(_ request: HTTPRequest, step: String) async throws(NextcloudPushError) -> HTTPResponse {
        try await ocs.perform(request, step: step)
    }

    private func refusal(_ response: HTTPResponse, step: String) -> NextcloudPushError {
        NextcloudOCSClient.refusal(response, step: step)
    }
}
