/// The options every `tidings kecalek` command shares, declared once.
enum KecalekOptions {
    /// `--store`: the cache file.
    static let store = OptionSpec.value(
        "--store", "path", default: "kecalek-cache.sqlite", environment: "TIDINGS_KECALEK_STORE",
        help: "The cache file.")
    /// `--key`: the cache's key; its value is never printed.
    static let key = OptionSpec.value(
        "--key", "hex", environment: "TIDINGS_KECALEK_KEY",
        help:
            "The cache's 256-bit key as 64 hex digits; required with --server (without it a sandbox cache uses the sandbox's "
            + "public demo key, which anyone can use).")
    /// `--server`: a real server instead of the sandbox.
    static let server = OptionSpec.value(
        "--server", "url", environment: "TIDINGS_KECALEK_SERVER",
        help: "A Kecalek WebSocket endpoint, ws:// or wss:// (default: a sandbox on a loopback WebSocket).")
    /// `--token`: the bearer token; sent as a header, never in the URL, never printed.
    static let token = OptionSpec.value(
        "--token", "token", environment: "TIDINGS_KECALEK_TOKEN",
        help: "Bearer token for --server; sent as a header, never printed.")

    /// The cache file and its key.
    static let cache = OptionGroup([store, key])
    /// The server and its credential.
    static let connection = OptionGroup([server, token])
}
