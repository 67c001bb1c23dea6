import Foundation
import TidingsPush

/// The options every `tidings mastodon` command shares, declared once.
enum MastodonOptions {
    /// `--server`: a real server's base URL instead of the sandbox.
    static let server = OptionSpec.value(
        "--server", "url", environment: "TIDINGS_MASTODON_SERVER",
        help: "A Mastodon or Nextcloud Social server, https:// or http:// (default: the sandbox, in process).")
    /// `--token`: the account's bearer token; sent in the `Authorization` header only, never printed.
    static let token = OptionSpec.value(
        "--token", "token", environment: "TIDINGS_MASTODON_TOKEN",
        help: "The account's access token for --server; sent as a header, never printed.")
    /// `--store`: the timeline store file.
    static let store = OptionSpec.value(
        "--store", "path", default: "mastodon-store.sqlite", environment: "TIDINGS_MASTODON_STORE",
        help: "The timeline store file.")
    /// `--account`: the name the store keeps the account under (several accounts may share a store).
    static let account = OptionSpec.value(
        "--account", "name", default: "default", help: "The name the store keeps this account under.")

    /// The server and its credential.
    static let connection = OptionGroup([server, token])
    /// The store and the account in it.
    static let storage = OptionGroup([store, account])
}

/// What `tidings mastodon sync` and `watch` were asked to do, validated.
struct MastodonSyncOptions: Sendable {
    /// The server; nil for the in-process sandbox.
    var server: URL?
    /// The token for `server` (the sandbox's own demo token is used without a server).
    var token: String?
    var store: String
    var account: String
    var json = false
    /// `watch` only: how pushes are used (nil: no push endpoint).
    var push: PushDeliveryMode?

    /// Checks what the command line alone can get wrong, before any file is opened.
    ///
    /// - Throws: ``ValidationError`` for a server URL that is not http(s), or a server without a token.
    init(server: String?, token: String?, store: String, account: String, json: Bool) throws {
        if let server {
            guard let url = URL(string: server), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                throw ValidationError("--server must be an https:// or http:// URL.")
            }
            guard let token, !token.isEmpty else {
                throw ValidationError("--server needs --token <token> or TIDINGS_MASTODON_TOKEN.")
            }
            self.server = url
        }
        guard !account.isEmpty else { throw ValidationError("--account must not be empty.") }
        self.token = token
        self.store = store
        self.account = account
        self.json = json
    }
}
