import Foundation
import TidingsCore
import TidingsNet

/// The OCS side every Nextcloud push request shares: the `OCS-APIRequest` and `Authorization` headers,
/// transport failures as `NextcloudPushError.transport`, refusals with their status and OCS code, and the
/// `{"ocs": {"meta", "data"}}` envelope.
struct NextcloudOCSClient: Sendable {
    let serverURL: URL
    let credentials: NextcloudCredentials
    let send: @Sendable (HTTPRequest) async throws -> HTTPResponse

    func url(_ path: String) -> URL { serverURL.appendingPathComponent(path) }

    func request(_ method: HTTPMethod, _ path: String, body: JSONValue? = nil) -> HTTPRequest {
        var request = HTTPRequest(method: method, url: url(path), body: body?.jsonData())
        request.headers["Authorization"] = credentials.authorizationHeader
        request.headers["OCS-APIRequest"] = "true"
        request.headers["Accept"] = "application/json"
        if body != nil { request.headers["Content-Type"] = "application/json" }
        return request
    }

    func perform(_ request: HTTPRequest, step: String) async throws(NextcloudPushError) -> HTTPResponse {
        do {
            return try await send(request)
        } catch {
            throw NextcloudPushError(.transport, detail: String(describing: type(of: error)), step: step)
        }
    }

    static func refusal(_ response: HTTPResponse, step: String) -> NextcloudPushError {
        if response.status == 401 { return NextcloudPushError(.unauthorized, status: 401, step: step) }
        return NextcloudPushError(.refused, detail: ocsMessage(response), status: response.status, step: step)
    }

    /// The OCS envelope's `data` object (`{"ocs": {"meta": …, "data": …}}`).
    static func ocsData(_ response: HTTPResponse, step: String = "server") throws(NextcloudPushError) -> JSONValue {
        guard let value = try? JSONValue(parsing: [UInt8](response.body)), let data = value["ocs"]?["data"],
            data.objectValue != nil
        else { throw NextcloudPushError(.malformedResponse, detail: "not an OCS JSON envelope", step: step) }
        return data
    }

    /// The error code the server put in the body (`ocs.data.message` or `ocs.meta.message`; the proxy's
    /// plain `message`), kept only when it is a short upper-case code (digits allowed: `INVALID_P256DH`), so no
    /// payload reaches an error.
    static func ocsMessage(_ response: HTTPResponse) -> String? {
        guard let value = try? JSONValue(parsing: [UInt8](response.body)) else { return nil }
        let candidates = [value["ocs"]?["data"]?["message"], value["ocs"]?["meta"]?["message"], value["message"]]
        for case .string(let text)? in candidates
        where !text.isEmpty && text.count <= 64 && text.first?.isUppercase == true
            && text.allSatisfy({ $0.isUppercase || $0 == "_" || ("0"..."9").contains($0) })
        {
            return text
        }
        return nil
    }
}
