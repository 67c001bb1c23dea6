import Foundation
import TidingsCore
import TidingsMastodon
import TidingsNet
import TidingsSandbox

/// The account a `tidings mastodon` command talks to: a real server over HTTP, or the sample sandbox in
/// process (seeded afresh each run: it does not outlive the process).
struct MastodonConnection: Sendable {
    let client: MastodonAPIClient
    let counter: MastodonCountingTransport
    /// Opens the user stream: TidingsNet's WebSocket for a server, the sandbox's own in process.
    let streamConnector: MastodonStreamConnector?
    /// The server's host or "sandbox": what messages name (never the token).
    let target: String

    init(_ options: MastodonSyncOptions) async {
        let inner: any MastodonTransport
        let serverURL: URL
        let token: String
        if let server = options.server, let given = options.token {
            inner = HTTPClient(configuration: .init(timeout: .seconds(30)))
            serverURL = server
            token = given
            target = server.host ?? "server"
            streamConnector = nil
        } else {
            let sandbox = await MastodonSandboxServer.sample()
            let http = sandbox.httpServer()
            inner = MastodonSandboxTransport(server: http)
            serverURL = URL(string: "https://sandbox.invalid")!
            token = MastodonSandboxServer.sampleAccounts[0].token
            target = "sandbox"
            streamConnector = MastodonSandboxServer.inProcessStreamConnector(http)
        }
        counter = MastodonCountingTransport(inner)
        client = MastodonAPIClient(
            server: serverURL, accountKey: options.account, authorization: MastodonAuthorization(token: token),
            transport: counter)
    }

    /// Opens (creating or migrating) the store for writing.
    static func openStore(_ path: String) async throws -> SQLiteDatabase {
        do {
            return try await SQLiteDatabase.open(path: path, schema: MastodonTimelineSchema.schema)
        } catch {
            throw ToolFailure(ExitCode.ioError, "Cannot open the store \(path): \(error)")
        }
    }
}
