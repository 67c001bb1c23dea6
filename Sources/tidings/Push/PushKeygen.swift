import TidingsPush

private let keygenJSONHelp = [
    "Prints the three values a Web Push subscription needs, base64url without padding:",
    "  public-key   65 bytes: send as the subscription's keys[p256dh]",
    "  auth         16 bytes: send as keys[auth]; secret",
    "  private-key  32 bytes: keep on the device; secret (what push decrypt's --private-key takes)",
    "",
    "JSON (--json): one object {\"type\":\"keys\",\"publicKey\",\"auth\",\"privateKey\"}.",
    "These are secrets: the command prints them because that is its job; keep its output out of logs.",
]

let pushKeygenCommand = Command(
    name: "keygen",
    abstract: "Print a new P-256 key pair and 16-byte auth secret for a Web Push subscription.",
    options: [jsonOption],
    discussion: keygenJSONHelp,
    validate: { parsed in parsed.flag(jsonOption) },
    run: { json in
        let keys: WebPushSubscriptionKeys
        do {
            keys = try WebPushSubscriptionKeys.generate()
        } catch {
            throw ToolFailure(ExitCode.software, "No key could be made: \(error).")
        }
        if json {
            JSONLines.emit([
                "type": "keys", "publicKey": keys.base64URLPublicKey, "auth": keys.base64URLAuthSecret,
                "privateKey": keys.base64URLPrivateKey,
            ])
        } else {
            print("public-key:  \(keys.base64URLPublicKey)")
            print("auth:        \(keys.base64URLAuthSecret)")
            print("private-key: \(keys.base64URLPrivateKey)")
        }
    }
)
