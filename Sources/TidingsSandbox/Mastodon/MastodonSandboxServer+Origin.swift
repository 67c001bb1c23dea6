import TidingsSandboxKit

extension MastodonSandboxServer {
    /// The origin a client reached this server at, for the URLs the server hands out (`Link` pages, the streaming
    /// URL): `http://<Host>` and `ws://<Host>` over loopback, so an app that follows them stays on the sandbox;
    /// `https://sandbox.invalid` in process, where requests carry no `Host`.
    struct Origin {
        /// The base of HTTP URLs, without a trailing slash.
        let http: String
        /// The base of the streaming WebSocket URL.
        let webSocket: String

        /// The origin of `request`: its `Host` when that is a plain host name or address with an optional port
        /// (anything else, e.g. a header with a path or spaces, falls back rather than being echoed).
        init(_ request: SandboxHTTPRequest) {
            let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]")
            if let host = request.headers["Host"], !host.isEmpty, host.count <= 255, host.allSatisfy(allowed.contains) {
                http = "http://\(host)"
                webSocket = "ws://\(host)"
            } else {
                http = "https://sandbox.invalid"
                webSocket = "wss://sandbox.invalid"
            }
        }
    }
}
