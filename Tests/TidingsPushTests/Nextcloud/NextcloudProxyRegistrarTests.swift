import Foundation
import Testing
import TidingsCore
import TidingsNet
import TidingsPush

/// Answers scripted statuses per "METHOD host path" and records every request.
actor NextcloudScriptedServer {
    var script: [String: [(Int, String)]]
    private(set) var requests: [HTTPRequest] = []

    init(_ script: [String: [(Int, String)]]) { self.script = script }

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        requests.append(request)
        let key = "\(request.method.rawValue) \(request.url.host ?? "")\(request.url.path)"
        let answer = script[key]?.isEmpty == false ? script[key]!.removeFirst() : (404, "{}")
        return HTTPResponse(status: answer.0, headers: [:], body: Data(answer.1.utf8), url: request.url)
    }
}

@Suite(.timeLimit(.minutes(1))) struct NextcloudProxyRegistrarTests {
    static let deviceKey = try? NextcloudDeviceKey()
    static let server = URL(string: "https://cloud.example.org/nc")!
    static let proxy = URL(string: "https://proxy.example.org")!
    static let pushPath = "POST cloud.example.org/nc/ocs/v2.php/apps/notifications/api/v2/push"
    static let okBody =
        #"{"ocs":{"meta":{"status":"ok"},"data":{"publicKey":"USERKEY","deviceIdentifier":"DEV","signature":"SIG"}}}"#

    static func registrar(_ server: NextcloudScriptedServer) -> NextcloudProxyRegistrar {
        NextcloudProxyRegistrar(
            serverURL: Self.server, credentials: NextcloudCredentials(user: "ada", appPassword: "s3cret-app-pw")
        ) { await server.handle($0) }
    }

    static func json(_ request: HTTPRequest) throws -> JSONValue {
        try JSONValue(parsing: [UInt8](try #require(request.body)))
    }

    @Test func registersAtTheServerThenTheProxyRetryingAConflictWithCloudID() async throws {
        let key = try #require(Self.deviceKey)
        let server = NextcloudScriptedServer([
            Self.pushPath: [(201, Self.okBody)],
            "POST proxy.example.org/devices": [(409, "{}"), (200, "{}")],
        ])
        let registration = try await Self.registrar(server).register(
            pushToken: "abc", deviceKey: key, proxyServer: Self.proxy)
        #expect(registration.userPublicKey == "USERKEY" && registration.deviceIdentifier == "DEV")
        let requests = await server.requests
        #expect(requests.count == 3)
        let first = try Self.json(requests[0])
        // SHA-512("abc") from FIPS 180-2.
        #expect(
            first["pushTokenHash"]?.stringValue
                == "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
                + "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f")
        #expect(first["devicePublicKey"]?.stringValue == key.publicKeyPEM)
        #expect(first["proxyServer"]?.stringValue == "https://proxy.example.org")
        #expect(requests[0].headers["OCS-APIRequest"] == "true")
        #expect(requests[0].headers["Authorization"] == "Basic " + Data("ada:s3cret-app-pw".utf8).base64EncodedString())
        let proxyFirst = try Self.json(requests[1])
        #expect(proxyFirst["pushToken"]?.stringValue == "abc")
        #expect(proxyFirst["deviceIdentifierSignature"]?.stringValue == "SIG")
        #expect(proxyFirst["userPublicKey"]?.stringValue == "USERKEY")
        #expect(proxyFirst["cloudId"] == nil)
        #expect(try Self.json(requests[2])["cloudId"]?.stringValue == "ada@cloud.example.org/nc")
        for request in requests {
            #expect(!request.url.absoluteString.contains("s3cret"))
        }
        // The proxy is another party: it never sees the Nextcloud login.
        #expect(requests[1].headers["Authorization"] == nil && requests[2].headers["Authorization"] == nil)
    }

    @Test func anAlreadyKnownDeviceSkipsTheProxy() async throws {
        let server = NextcloudScriptedServer([Self.pushPath: [(200, Self.okBody)]])
        _ = try await Self.registrar(server).register(
            pushToken: "t", deviceKey: try #require(Self.deviceKey), proxyServer: Self.proxy)
        #expect(await server.requests.count == 1)
    }

    @Test func refusalsAreTypedWithTheirStepStatusAndCode() async throws {
        let key = try #require(Self.deviceKey)
        let invalid = NextcloudScriptedServer([
            Self.pushPath: [(400, #"{"ocs":{"meta":{},"data":{"message":"INVALID_PUSHTOKEN_HASH"}}}"#)]
        ])
        do {
            _ = try await Self.registrar(invalid).register(pushToken: "t", deviceKey: key, proxyServer: Self.proxy)
            Issue.record("a 400 registered")
        } catch {
            #expect(error == .refused && error.status == 400 && error.step == "server")
            #expect(error.detail == "INVALID_PUSHTOKEN_HASH")
            #expect(!error.description.contains("s3cret"))
        }
        let unauthorized = NextcloudScriptedServer([Self.pushPath: [(401, "{}")]])
        await #expect(throws: NextcloudPushError.unauthorized) {
            try await Self.registrar(unauthorized).register(pushToken: "t", deviceKey: key, proxyServer: Self.proxy)
        }
        let garbage = NextcloudScriptedServer([Self.pushPath: [(201, "<html>")]])
        await #expect(throws: NextcloudPushError.malformedResponse) {
            try await Self.registrar(garbage).register(pushToken: "t", deviceKey: key, proxyServer: Self.proxy)
        }
        let proxyRefuses = NextcloudScriptedServer([
            Self.pushPath: [(201, Self.okBody)], "POST proxy.example.org/devices": [(400, "{}")],
        ])
        do {
            _ = try await Self.registrar(proxyRefuses).register(pushToken: "t", deviceKey: key, proxyServer: Self.proxy)
            Issue.record("a proxy 400 registered")
        } catch {
            #expect(error == .refused && error.step == "proxy" && error.status == 400)
        }
    }

    @Test func signingOutDeletesAtTheServerAndTheProxy() async throws {
        let server = NextcloudScriptedServer([
            "DELETE cloud.example.org/nc/ocs/v2.php/apps/notifications/api/v2/push": [(202, "{}"), (200, "{}")],
            "DELETE proxy.example.org/devices": [(200, "{}"), (403, "{}")],
        ])
        let registration = NextcloudProxyRegistration(
            userPublicKey: "USERKEY", deviceIdentifier: "DEV", signature: "SIG", proxyServer: Self.proxy)
        try await Self.registrar(server).unregister(registration)
        // Twice: both sides no longer know the device, which counts as signed out.
        try await Self.registrar(server).unregister(registration)
        let requests = await server.requests
        #expect(requests.map(\.method) == [.delete, .delete, .delete, .delete])
        #expect(try Self.json(requests[1])["deviceIdentifier"]?.stringValue == "DEV")
    }
}
