import Foundation
import TidingsPush

/// What `tidings push decrypt` was asked to do, validated.
struct PushDecryptOptions: Sendable {
    let decryptor: WebPushDecryptor
    let encoding: WebPushContentEncoding
    let legacy: WebPushLegacyParameters?
    /// With `--store`: decide with the notification policy instead of printing the plaintext.
    var decide: PushDecideOptions? = nil
    /// `--json`: the decision as a JSON object.
    var json = false
}

let pushDecryptCommand = Command(
    name: "decrypt",
    abstract: "Decrypt a Web Push body read on standard input; write the plaintext to standard output.",
    options: [
        PushOptions.privateKey, PushOptions.auth, PushOptions.encoding, PushOptions.dh, PushOptions.salt,
        PushOptions.recordSize, PushOptions.store, PushOptions.account, PushOptions.quietHours, PushOptions.digest,
        PushOptions.timeZone, jsonOption,
    ],
    discussion: [
        "The body is read raw (binary, not base64) up to end-of-file; at most 1 MiB.",
        "With --store and --account the plaintext must be a Mastodon push payload: the notification policy decides",
        "  (every category on, quiet hours only with --quiet-hours, a digest only with --digest, both read in the",
        "  device's zone or --time-zone's) and records a raise in the store, and one line is printed instead of",
        "  the plaintext: raise <id>: <title> | update <id>: <title> | hold until <date>: <reason> | drop: <reason>",
        "  (--json: {type: decision, action, identifier, title, body, until, reason}).",
        "EXIT STATUS: 0 decrypted; 64 usage (missing or malformed keys or parameters); 65 the body was refused",
        "  (empty, truncated, wrong record size, bad delimiter or padding, altered, or for other keys, or not a",
        "  Mastodon payload with --store), with one 'Error:' line saying why on standard error; 75 the store is busy.",
        "  Keys and the auth secret are never printed.",
    ],
    validate: { parsed in
        var options = try validatePushDecrypt(parsed)
        let store = parsed.string(PushOptions.store)
        let account = parsed.string(PushOptions.account)
        switch (store, account) {
        case (let store?, let account?) where !store.isEmpty && !account.isEmpty:
            options.decide = PushDecideOptions(
                storePath: store, account: account,
                quietHours: try parsed.string(PushOptions.quietHours).map(PushOptions.parseQuietHours),
                digestHours: try parsed.string(PushOptions.digest).map(PushOptions.parseDigestHours) ?? [],
                zone: try parsed.string(PushOptions.timeZone).map(PushOptions.parseTimeZone))
        case (nil, nil):
            for option in [PushOptions.quietHours, PushOptions.digest, PushOptions.timeZone]
            where parsed.string(option) != nil {
                throw ValidationError("\(option.name) needs --store and --account.")
            }
        default:
            throw ValidationError("--store and --account go together (both non-empty).")
        }
        options.json = parsed.flag(jsonOption)
        return options
    },
    run: { options in try await runPushDecrypt(options) }
)

private func validatePushDecrypt(_ parsed: ParsedOptions) throws -> PushDecryptOptions {
    guard let privateKey = parsed.string(PushOptions.privateKey) else {
        throw ValidationError("Missing --private-key (or TIDINGS_PUSH_PRIVATE_KEY).")
    }
    guard let auth = parsed.string(PushOptions.auth) else {
        throw ValidationError("Missing --auth (or TIDINGS_PUSH_AUTH).")
    }
    let keys: WebPushSubscriptionKeys
    do {
        keys = try WebPushSubscriptionKeys(base64URLPrivateKey: privateKey, base64URLAuthSecret: auth)
    } catch {
        // The error names which key and why, never its value.
        throw ValidationError("The subscription keys are refused: \(error.detail ?? "\(error)").")
    }
    let encodingText = parsed.string(PushOptions.encoding) ?? "aes128gcm"
    guard let encoding = WebPushContentEncoding(rawValue: encodingText) else {
        throw ValidationError("The value '\(encodingText)' is invalid for '--encoding': expected aes128gcm or aesgcm.")
    }
    let dh = parsed.string(PushOptions.dh)
    let salt = parsed.string(PushOptions.salt)
    let recordSize = try parsed.int(PushOptions.recordSize, in: 3...Int(UInt32.max))
    switch encoding {
    case .aes128gcm:
        guard dh == nil, salt == nil, recordSize == nil else {
            throw ValidationError("--dh, --salt and --rs are for aesgcm; an aes128gcm body carries them itself.")
        }
        return PushDecryptOptions(decryptor: WebPushDecryptor(keys: keys), encoding: .aes128gcm, legacy: nil)
    case .aesgcm:
        guard let dh, let salt else { throw ValidationError("aesgcm needs --dh and --salt.") }
        do {
            let legacy = try WebPushLegacyParameters(
                senderPublicKey: WebPushBase64URL.decode(dh, what: "--dh"),
                salt: WebPushBase64URL.decode(salt, what: "--salt"),
                recordSize: recordSize ?? WebPushLegacyParameters.defaultRecordSize)
            return PushDecryptOptions(decryptor: WebPushDecryptor(keys: keys), encoding: .aesgcm, legacy: legacy)
        } catch {
            throw ValidationError("The aesgcm parameters are refused: \(error.detail ?? "\(error)").")
        }
    }
}

private func runPushDecrypt(_ options: PushDecryptOptions) async throws {
    let limit = WebPushDecryptor.maximumBodyByteCount
    let body: [UInt8]
    do {
        guard let read = try await Console.current.readStandardInput(limit: limit) else {
            throw ToolFailure(ExitCode.dataError, "The body is refused: more than \(limit) bytes on standard input.")
        }
        body = read
    } catch let error as Console.InputError {
        throw ToolFailure(ExitCode.ioError, error.description)
    }
    if let decide = options.decide {
        // The library's extension path decrypts and decides (MastodonPushExtensionDecider): what P2 measures.
        try await decidePush(options.incoming(body), keys: options.decryptor.keys, options: decide, json: options.json)
        return
    }
    let plaintext: [UInt8]
    do {
        plaintext = try options.decryptor.decrypt(body, encoding: options.encoding, legacy: options.legacy)
    } catch {
        throw ToolFailure(ExitCode.dataError, "The body is refused: \(error).")
    }
    Console.current.writeOutput(bytes: plaintext)
}

extension PushDecryptOptions {
    /// `body` as a push endpoint receives it: the encoding, and for `aesgcm` the `Crypto-Key` and `Encryption`
    /// headers the options' `--dh`, `--salt` and `--rs` stand for.
    func incoming(_ body: [UInt8]) -> IncomingWebPush {
        var cryptoKey: String?
        var encryption: String?
        if let legacy {
            cryptoKey = "dh=" + WebPushBase64URL.encode(legacy.senderPublicKey)
            encryption = "salt=" + WebPushBase64URL.encode(legacy.salt) + ";rs=\(legacy.recordSize)"
        }
        return IncomingWebPush(
            endpoint: URL(string: "https://push.invalid/cli")!, body: body, contentEncoding: encoding.rawValue,
            cryptoKey: cryptoKey, encryption: encryption)
    }
}
