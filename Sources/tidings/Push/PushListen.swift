import Foundation
import TidingsPush
import TidingsSandbox

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

private let listenPortOption = OptionSpec.value(
    "--port", "n", default: "0", help: "The loopback port to listen on, 0 to 65535 (0: any free port).")

/// What `tidings push listen` was asked to do, validated.
struct PushListenOptions: Sendable {
    let keys: WebPushSubscriptionKeys
    let port: Int
}

let pushListenCommand = Command(
    name: "listen",
    abstract: "Serve a loopback Web Push endpoint; print each push it receives, checked (VAPID) and decrypted.",
    options: [PushOptions.privateKey, PushOptions.auth, listenPortOption],
    discussion: [
        "Prints 'endpoint: <url>' (subscribe with it and the keys' public key and auth), then one line per push:",
        "  push: <encoding>, <n> bytes, VAPID <origin>: <plaintext>    or    push refused: <reason>",
        "Serves until SIGINT or SIGTERM, then exits 0. Keys and the auth secret are never printed.",
    ],
    validate: { parsed in
        guard let privateKey = parsed.string(PushOptions.privateKey), let auth = parsed.string(PushOptions.auth) else {
            throw ValidationError("Missing --private-key or --auth (or TIDINGS_PUSH_PRIVATE_KEY, TIDINGS_PUSH_AUTH).")
        }
        do {
            let keys = try WebPushSubscriptionKeys(base64URLPrivateKey: privateKey, base64URLAuthSecret: auth)
            return PushListenOptions(keys: keys, port: try parsed.int(listenPortOption, in: 0...65_535) ?? 0)
        } catch let error as WebPushError {
            throw ValidationError("The subscription keys are refused: \(error.detail ?? "\(error)").")
        }
    },
    run: { (options: PushListenOptions) in
        let termination = TerminationSignal()
        let console = Console.current
        let endpoint = SandboxWebPushEndpoint(onMessage: { message in
            if let plaintext = message.plaintext, let vapid = message.vapid {
                console.writeOutput(
                    "push: \(message.contentEncoding ?? "?"), \(message.body.count) bytes, VAPID \(vapid.audience): "
                        + "\(String(decoding: plaintext, as: UTF8.self))\n")
            } else {
                console.writeOutput("push refused: \(message.failure ?? "unknown")\n")
            }
            fflush(nil)
        })
        endpoint.register("tidings", keys: options.keys)
        let listener = try endpoint.httpServer().serve(port: options.port)
        await serveUntilTerminated(
            termination,
            announcing: [
                "Web Push endpoint listening on 127.0.0.1 (Ctrl-C to stop).",
                "endpoint: \(listener.url.absoluteString)push/tidings",
                "public-key: \(options.keys.base64URLPublicKey)",
            ]
        ) { listener.stop() }
    }
)
