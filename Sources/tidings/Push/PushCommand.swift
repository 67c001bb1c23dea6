import TidingsPush

/// `tidings push`: Web Push by hand — make subscription keys, decrypt a pushed body.
let pushCommand = Command(
    name: "push",
    abstract: "Web Push: make subscription keys, decrypt a pushed message body, listen for pushes.",
    subcommands: [pushDecryptCommand, pushKeygenCommand, pushListenCommand]
)

/// The options of `tidings push decrypt`, declared once.
enum PushOptions {
    /// `--private-key`: the subscription's private key; never printed.
    static let privateKey = OptionSpec.value(
        "--private-key", "base64url", environment: "TIDINGS_PUSH_PRIVATE_KEY",
        help: "The subscription's 32-byte P-256 private key (as keygen prints it); never printed.")
    /// `--auth`: the subscription's auth secret; never printed.
    static let auth = OptionSpec.value(
        "--auth", "base64url", environment: "TIDINGS_PUSH_AUTH",
        help: "The subscription's 16-byte auth secret; never printed.")
    /// `--encoding`: the body's content encoding.
    static let encoding = OptionSpec.value(
        "--encoding", "aes128gcm|aesgcm", default: "aes128gcm",
        help: "The Content-Encoding the message arrived with.")
    /// `--dh`: the sender's public key of an `aesgcm` message.
    static let dh = OptionSpec.value(
        "--dh", "base64url", help: "aesgcm only, required: the sender's public key (the Crypto-Key header's dh).")
    /// `--salt`: the salt of an `aesgcm` message.
    static let salt = OptionSpec.value(
        "--salt", "base64url", help: "aesgcm only, required: the salt (the Encryption header's salt).")
    /// `--rs`: the record size of an `aesgcm` message.
    static let recordSize = OptionSpec.value(
        "--rs", "n", help: "aesgcm only: the record size (the Encryption header's rs; 4096 when absent).")
}
