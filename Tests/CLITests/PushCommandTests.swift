import Foundation
import PeerSupport
import Testing
import TidingsCore
import TidingsNet
import TidingsPush

@testable import tidings

/// `tidings push keygen` and `tidings push decrypt`, in process (``Runner/capture(_:standardInput:)``) and once
/// as the built binary reading a real standard input.
@Suite(.timeLimit(.minutes(1))) struct PushCommandTests {
    /// RFC 8291 Appendix A: the user agent's keys and the message sent to it.
    static let rfcPrivateKey = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
    static let rfcAuth = "BTBZMqHH6r4Tts7J_aSIgg"
    static let rfcBody =
        "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"

    private func run(_ words: [String], input: [UInt8] = [], environment: [String: String] = [:]) async -> (
        status: Int32, output: [UInt8], error: String
    ) {
        let result = await Runner(root: tidingsRoot, environment: environment).capture(words, standardInput: input)
        return (result.captured.status, result.outputBytes, result.captured.standardError)
    }

    private func keygen() async throws -> (publicKey: [UInt8], auth: String, privateKey: String) {
        let result = await Runner(root: tidingsRoot, environment: [:]).capture(["push", "keygen", "--json"])
        #expect(result.status == 0)
        let json = try JSONValue(parsing: Data(result.standardOutput.utf8))
        guard case .string(let publicKey)? = json["publicKey"], case .string(let auth)? = json["auth"],
            case .string(let privateKey)? = json["privateKey"], json["type"] == .string("keys")
        else {
            throw CLIFailure(description: "unexpected keygen output: \(result.standardOutput)")
        }
        return (try WebPushBase64URL.decode(publicKey), auth, privateKey)
    }

    struct CLIFailure: Error { let description: String }

    @Test func theRFC8291MessageDecryptsToStandardOutput() async throws {
        let body = try WebPushBase64URL.decode(Self.rfcBody)
        let run = await run(
            ["push", "decrypt", "--private-key", Self.rfcPrivateKey, "--auth", Self.rfcAuth], input: body)
        #expect(run.status == 0)
        #expect(String(decoding: run.output, as: UTF8.self) == "When I grow up, I want to be a watermelon")
        #expect(run.error.isEmpty)
    }

    @Test func keygenPrintsKeysThatDecryptWhatIsEncryptedForThem() async throws {
        let keys = try await keygen()
        let plaintext = (0..<300).map { UInt8(truncatingIfNeeded: $0) }
        for encoding in WebPushContentEncoding.allCases {
            let message = try WebPushEncryptor.encrypt(
                plaintext, receiverPublicKey: keys.publicKey, authSecret: WebPushBase64URL.decode(keys.auth),
                encoding: encoding, recordSize: encoding == .aesgcm ? 100 : 4096)
            var words = ["push", "decrypt", "--private-key", keys.privateKey, "--auth", keys.auth]
            if let legacy = message.legacy {
                words += [
                    "--encoding", "aesgcm", "--dh", WebPushBase64URL.encode(legacy.senderPublicKey), "--salt",
                    WebPushBase64URL.encode(legacy.salt), "--rs", "100",
                ]
            }
            let run = await run(words, input: message.body)
            #expect(run.status == 0, "\(encoding): \(run.error)")
            #expect(run.output == plaintext, "\(encoding)")
        }
        let text = await Runner(root: tidingsRoot, environment: [:]).capture(["push", "keygen"])
        #expect(text.status == 0)
        let labels = text.standardOutput.split(separator: "\n").map { $0.split(separator: ":").first ?? "" }
        #expect(labels == ["public-key", "auth", "private-key"])
    }

    @Test func keysMayComeFromTheEnvironment() async throws {
        let run = await run(
            ["push", "decrypt"], input: try WebPushBase64URL.decode(Self.rfcBody),
            environment: ["TIDINGS_PUSH_PRIVATE_KEY": Self.rfcPrivateKey, "TIDINGS_PUSH_AUTH": Self.rfcAuth])
        #expect(run.status == 0)
        #expect(String(decoding: run.output, as: UTF8.self) == "When I grow up, I want to be a watermelon")
    }

    @Test func malformedBodiesExit65WithOneLineAndNoSecret() async throws {
        var body = try WebPushBase64URL.decode(Self.rfcBody)
        var tampered = body
        tampered[tampered.count - 1] ^= 1
        let otherKeys = try WebPushSubscriptionKeys.generate()
        let cases: [(input: [UInt8], kind: String, privateKey: String, auth: String)] = [
            ([], "emptyBody", Self.rfcPrivateKey, Self.rfcAuth),
            (Array(body.prefix(40)), "truncatedHeader", Self.rfcPrivateKey, Self.rfcAuth),
            (tampered, "authenticationFailure", Self.rfcPrivateKey, Self.rfcAuth),
            (body, "authenticationFailure", otherKeys.base64URLPrivateKey, otherKeys.base64URLAuthSecret),
        ]
        body.replaceSubrange(16..<20, with: [0, 0, 0, 5])
        for (input, kind, privateKey, auth) in cases + [(body, "invalidRecordSize", Self.rfcPrivateKey, Self.rfcAuth)] {
            let run = await run(["push", "decrypt", "--private-key", privateKey, "--auth", auth], input: input)
            #expect(run.status == 65, "\(kind)")
            #expect(run.output.isEmpty)
            let lines = run.error.split(separator: "\n")
            #expect(lines.count == 1, "\(run.error)")
            #expect(lines.first?.hasPrefix("Error: The body is refused: WebPushError.\(kind)") == true, "\(run.error)")
            #expect(!run.error.contains(privateKey) && !run.error.contains(auth))
        }
        let aesgcm = await run(
            [
                "push", "decrypt", "--private-key", Self.rfcPrivateKey, "--auth", Self.rfcAuth, "--encoding", "aesgcm",
                "--dh", "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8",
                "--salt", "DGv6ra1nlYgDCS1FRnbzlw",
            ], input: [UInt8](repeating: 0, count: 4096 + 16))
        #expect(aesgcm.status == 65)
        #expect(aesgcm.error.hasPrefix("Error: The body is refused: WebPushError.truncatedRecord"))
    }

    @Test func aBodyOverTheLimitIsRefusedWithoutDecrypting() async throws {
        let input = [UInt8](repeating: 0, count: WebPushDecryptor.maximumBodyByteCount + 1)
        let run = await run(
            ["push", "decrypt", "--private-key", Self.rfcPrivateKey, "--auth", Self.rfcAuth], input: input)
        #expect(run.status == 65)
        #expect(run.error.hasPrefix("Error: The body is refused: more than 1048576 bytes on standard input."))
    }

    @Test func wrongCommandLinesExit64BeforeReadingAndNeverEchoASecret() async throws {
        let secret = "c2VjcmV0LXNjYWxhci10aGF0LWlzLW5vdC1hLWtleQ"
        let cases: [[String]] = [
            ["--auth", Self.rfcAuth],
            ["--private-key", Self.rfcPrivateKey],
            ["--private-key", secret, "--auth", Self.rfcAuth],
            ["--private-key", Self.rfcPrivateKey, "--auth", secret],
            ["--private-key", Self.rfcPrivateKey, "--auth", Self.rfcAuth, "--encoding", "gzip"],
            ["--private-key", Self.rfcPrivateKey, "--auth", Self.rfcAuth, "--encoding", "aesgcm"],
            ["--private-key", Self.rfcPrivateKey, "--auth", Self.rfcAuth, "--dh", "AAAA"],
            [
                "--private-key", Self.rfcPrivateKey, "--auth", Self.rfcAuth, "--encoding", "aesgcm", "--dh", "AAAA",
                "--salt", "AAAA",
            ],
            ["--private-key", Self.rfcPrivateKey, "--auth", Self.rfcAuth, "--encoding", "aesgcm", "--rs", "2"],
        ]
        for words in cases {
            let run = await run(["push", "decrypt"] + words, input: try WebPushBase64URL.decode(Self.rfcBody))
            #expect(run.status == 64, "\(words)")
            #expect(run.output.isEmpty)
            #expect(run.error.hasPrefix("Error: "), "\(words)")
            #expect(!run.error.contains(secret), "\(words): \(run.error)")
        }
    }

    @Test func theBinaryReadsItsStandardInput() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tidings-push-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(try WebPushBase64URL.decode(Self.rfcBody)).write(to: file)
        let arguments = ["push", "decrypt", "--private-key", Self.rfcPrivateKey, "--auth", Self.rfcAuth]
        let outcome = try await ChildProcess.run(
            executable: ToolRun.executable.path, arguments: arguments, standardInput: .file(file.path),
            timeout: .seconds(45))
        #expect(outcome.termination == .exited(0))
        #expect(String(decoding: outcome.standardOutput, as: UTF8.self) == "When I grow up, I want to be a watermelon")
        try Data([1, 2, 3]).write(to: file)
        let refused = try await ChildProcess.run(
            executable: ToolRun.executable.path, arguments: arguments, standardInput: .file(file.path),
            timeout: .seconds(45))
        #expect(refused.termination == .exited(65))
        #expect(String(decoding: refused.standardError, as: UTF8.self).hasPrefix("Error: The body is refused: "))
        // The reader stops at the limit: a larger input is refused, not buffered whole.
        try Data(count: WebPushDecryptor.maximumBodyByteCount + 1).write(to: file)
        let tooLarge = try await ChildProcess.run(
            executable: ToolRun.executable.path, arguments: arguments, standardInput: .file(file.path),
            timeout: .seconds(45))
        #expect(tooLarge.termination == .exited(65))
        #expect(String(decoding: tooLarge.standardError, as: UTF8.self).contains("more than 1048576 bytes"))
    }
}

/// `tidings push listen` as the built binary: it prints its endpoint, receives a VAPID-signed push over loopback,
/// prints it decrypted, and exits 0 on SIGTERM.
@Suite(.timeLimit(.minutes(1))) struct PushListenCommandTests {
    @Test func aSignedPushIsPrintedDecryptedAndAForgedOneRefused() async throws {
        let keys = try WebPushSubscriptionKeys.generate()
        let child = try ChildProcess.spawn(
            executable: ToolRun.executable.path,
            arguments: [
                "push", "listen", "--private-key", keys.base64URLPrivateKey, "--auth", keys.base64URLAuthSecret,
            ],
            standardInput: .pipe)
        defer { child.signal(SIGKILL) }
        let announced = try await child.readOutput(timeout: .seconds(30)) {
            String(decoding: $0, as: UTF8.self).contains("public-key: ")
                && String(decoding: $0, as: UTF8.self).hasSuffix("\n")
        }
        let text = String(decoding: announced.data, as: UTF8.self)
        #expect(!text.contains(keys.base64URLPrivateKey) && !text.contains(keys.base64URLAuthSecret))
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("endpoint: ") })
        let endpoint = try #require(URL(string: String(line.dropFirst("endpoint: ".count))))
        let message = try WebPushEncryptor.encrypt(
            Array("{\"title\":\"hello\"}".utf8), receiverPublicKey: keys.publicKey, authSecret: keys.authSecret,
            encoding: .aes128gcm)
        let vapid = try WebPushVAPID.headers(
            endpoint: endpoint, key: try TidingsCrypto.P256.Signing.PrivateKey(), subject: "mailto:test@example",
            expiry: Date().addingTimeInterval(600), standard: true)
        var request = HTTPRequest(method: .post, url: endpoint, body: Data(message.body))
        request.headers["Content-Encoding"] = "aes128gcm"
        request.headers["Authorization"] = vapid.authorization
        #expect(try await HTTPClient().response(for: request).status == 201)
        request.headers["Authorization"] = nil
        #expect(try await HTTPClient().response(for: request).status == 401)
        let printed = try await child.readOutput(timeout: .seconds(30)) {
            String(decoding: $0, as: UTF8.self).contains("push refused: ")
        }
        let output = String(decoding: printed.data, as: UTF8.self)
        #expect(output.contains("push: aes128gcm, \(message.body.count) bytes, VAPID http://127.0.0.1:"))
        #expect(output.contains(": {\"title\":\"hello\"}"))
        child.signal(SIGTERM)
        #expect(await child.waitForExit(timeout: .seconds(30)) == .exited(0))
    }
}
