// swift-tools-version:6.0
import PackageDescription

/// libFuzzer targets for Tidings' wire decoders. Build with `./run <target>` (see README.md);
/// `-parse-as-library` keeps Swift from emitting a `main` that would clash with libFuzzer's.
let fuzzerSettings: [SwiftSetting] = [.unsafeFlags(["-parse-as-library"])]

let package = Package(
    name: "TidingsFuzz",
    dependencies: [.package(name: "Tidings", path: "..")],
    targets: [
        // Owned by the WebSocket transport: feeds bytes to WebSocketFrameDecoder and the assembler.
        .executableTarget(
            name: "FuzzWebSocketFrame",
            dependencies: [.product(name: "TidingsNet", package: "Tidings")],
            swiftSettings: fuzzerSettings
        ),
        // Owned by the Socket.IO client (branch `socketio`): Engine.IO packet and payload decoder.
        .executableTarget(
            name: "FuzzEngineIOPacket",
            dependencies: [.product(name: "TidingsNet", package: "Tidings")],
            swiftSettings: fuzzerSettings
        ),
        // Owned by the Socket.IO client (branch `socketio`): Socket.IO packet decoder.
        .executableTarget(
            name: "FuzzSocketIOPacket",
            dependencies: [
                .product(name: "TidingsCore", package: "Tidings"), .product(name: "TidingsNet", package: "Tidings"),
            ],
            swiftSettings: fuzzerSettings
        ),
        // The Kecalek backend: inbound frames, JSON values, messages and timestamps from the server.
        .executableTarget(
            name: "FuzzKecalekFrame",
            dependencies: [
                .product(name: "TidingsCore", package: "Tidings"), .product(name: "TidingsKecalek", package: "Tidings"),
            ],
            swiftSettings: fuzzerSettings
        ),
        // The polling pool's HTTP/1.1 response parser: status line, headers, chunked and fixed bodies.
        .executableTarget(
            name: "FuzzHTTPResponse",
            dependencies: [.product(name: "TidingsNet", package: "Tidings")],
            swiftSettings: fuzzerSettings
        ),
        // The WebSocket client's handshake-response parser.
        .executableTarget(
            name: "FuzzWebSocketHandshake",
            dependencies: [.product(name: "TidingsNet", package: "Tidings")],
            swiftSettings: fuzzerSettings
        ),
        // Push (issue 12): the TZif reader and POSIX TZ strings behind the policy's ICU-free local time.
        .executableTarget(
            name: "FuzzZoneInfo",
            dependencies: [.product(name: "TidingsPush", package: "Tidings")],
            swiftSettings: fuzzerSettings
        ),
        // Web Push (issue 12): the aes128gcm and aesgcm decoders and the legacy header parser.
        .executableTarget(
            name: "FuzzWebPushDecrypt",
            dependencies: [.product(name: "TidingsPush", package: "Tidings")],
            swiftSettings: fuzzerSettings
        ),
        // The YpChat backend: socket event payloads mapped and reduced into ChatState, REST bodies.
        .executableTarget(
            name: "FuzzYpChatPayload",
            dependencies: [
                .product(name: "TidingsCore", package: "Tidings"), .product(name: "TidingsYpChat", package: "Tidings"),
            ],
            swiftSettings: fuzzerSettings
        ),
        // Mastodon (issue 11): statuses, notifications, grouped notifications, markers, instances.
        .executableTarget(
            name: "FuzzMastodonWire",
            dependencies: [.product(name: "TidingsMastodon", package: "Tidings")],
            swiftSettings: fuzzerSettings
        ),
        // OpenMates (issue 14): the wire decoder (envelope, server events) and the content-blob and chat-key
        // parsers.
        .executableTarget(
            name: "FuzzOpenMatesWire",
            dependencies: [
                .product(name: "TidingsCore", package: "Tidings"),
                .product(name: "TidingsOpenMates", package: "Tidings"),
            ],
            swiftSettings: fuzzerSettings
        ),
        // Push (issue 12): the notification policy's HTML-to-text and truncation, with their promises checked.
        .executableTarget(
            name: "FuzzNotificationPlainText",
            dependencies: [.product(name: "TidingsPush", package: "Tidings")],
            swiftSettings: fuzzerSettings
        ),
        // Push (issue 12): Login Flow v2's two answers (flow, granted poll), with a round trip of what they accept.
        .executableTarget(
            name: "FuzzNextcloudLogin",
            dependencies: [
                .product(name: "TidingsCore", package: "Tidings"), .product(name: "TidingsPush", package: "Tidings"),
            ],
            swiftSettings: fuzzerSettings
        ),
        // Push (issue 12): the decrypted Nextcloud proxy subject's parser, with a round trip of what it accepts.
        .executableTarget(
            name: "FuzzNextcloudSubject",
            dependencies: [
                .product(name: "TidingsCore", package: "Tidings"), .product(name: "TidingsPush", package: "Tidings"),
            ],
            swiftSettings: fuzzerSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
