// swift-tools-version:6.0
import PackageDescription

/// OpenSSL backs crypto and TLS on Linux; Apple platforms use CryptoKit, Security and Network instead.
let openSSLOnLinux: Target.Dependency = .target(name: "COpenSSL", condition: .when(platforms: [.linux]))

/// The sources choose OpenSSL or Apple's frameworks by `#if TIDINGS_OPENSSL` / `#else`, never by
/// `canImport(COpenSSL)` or `canImport(CryptoKit)`: Xcode is reported to ignore a dependency's platform
/// condition (swift-package-manager #5866), and a Mac with Homebrew's OpenSSL can import COpenSSL, so a
/// `canImport` could take the OpenSSL branch on Apple. A define set here per platform cannot. Every target
/// with such a branch takes these settings.
let platformChoice: [SwiftSetting] = [.define("TIDINGS_OPENSSL", .when(platforms: [.linux]))]

/// Issue 12's P2: `tidings push decrypt` is the decrypt-and-decide path of a memory-limited notification extension
/// (< 24 MB peak RSS), and on Linux most of a dynamically linked run's RSS is the start-up pages of the Swift
/// runtime's and Foundation's shared libraries. A release `tidings` therefore links them statically (the
/// toolchain's own `swift_static` archives: no package beyond the toolchain) and as a non-PIE executable (the
/// loader then writes no relocations into the binary's pages; they were 41 % of a static PIE run's page faults).
/// SwiftPM's `--static-swift-stdlib` would also compile every module against the static resource directory, which
/// would break the dynamically linked products that share these modules (tidings-bench, the Fuzz package); the
/// modules are the same either way, so only the link changes, and it names the static Foundation's own
/// dependencies (CoreFoundation, ICU, ...) that the dynamic modules' autolink entries leave out. Release only:
/// debug builds and tests link as before. The link prints one warning from the toolchain's static Foundation
/// (`the use of 'mktemp' is dangerous`, glibc's link-time note on FoundationEssentials' temporary files); gold has no
/// switch for it, and any `--static-swift-stdlib` build prints it too. Figures: docs/BENCHMARKS.md.
let staticReleaseLinkFlags = [
    "-static-stdlib", "-Xlinker", "-no-pie", "-lCoreFoundation", "-l_FoundationICU", "-l_FoundationCollections",
    "-l_FoundationCShims", "-lFoundationInternationalization", "-lFoundationEssentials", "-lswiftSynchronization",
    "-lstdc++",
]

let package = Package(
    name: "Tidings",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "TidingsCore", targets: ["TidingsCore"]),
        .library(name: "TidingsNet", targets: ["TidingsNet"]),
        .library(name: "TidingsKecalek", targets: ["TidingsKecalek"]),
        .library(name: "TidingsMastodon", targets: ["TidingsMastodon"]),
        .library(name: "TidingsYpChat", targets: ["TidingsYpChat"]),
        .library(name: "TidingsOpenMates", targets: ["TidingsOpenMates"]),
        .library(name: "TidingsPush", targets: ["TidingsPush"]),
        .library(name: "TidingsSandboxKit", targets: ["TidingsSandboxKit"]),
        .library(name: "TidingsSandbox", targets: ["TidingsSandbox"]),
        .executable(name: "tidings", targets: ["tidings"]),
        .executable(name: "tidings-bench", targets: ["tidings-bench"]),
    ],
    targets: [
        // System libraries (Debian: libsqlite3-dev, libssl-dev).
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),

        // Library layers, each depending only on the ones above it.
        .target(name: "TidingsCore", dependencies: ["CSQLite", openSSLOnLinux], swiftSettings: platformChoice),
        .target(name: "TidingsNet", dependencies: ["TidingsCore", openSSLOnLinux], swiftSettings: platformChoice),
        .target(name: "TidingsKecalek", dependencies: ["TidingsCore", "TidingsNet"]),
        .target(name: "TidingsMastodon", dependencies: ["TidingsCore", "TidingsNet"]),
        .target(name: "TidingsYpChat", dependencies: ["TidingsCore", "TidingsNet"]),
        .target(name: "TidingsOpenMates", dependencies: ["TidingsCore", "TidingsNet"]),
        .target(name: "TidingsPush", dependencies: ["TidingsCore", "TidingsNet", "TidingsMastodon"]),
        // The kit every backend's sandbox is built from (loopback HTTP/WebSocket servers, faults, request log);
        // it knows no backend. TidingsSandbox holds the backends' sandboxes, one folder each.
        .target(name: "TidingsSandboxKit", dependencies: ["TidingsCore", "TidingsNet"]),
        .target(
            name: "TidingsSandbox",
            dependencies: [
                "TidingsCore", "TidingsNet", "TidingsSandboxKit", "TidingsKecalek", "TidingsMastodon", "TidingsYpChat",
                "TidingsOpenMates", "TidingsPush",
            ]
        ),

        // Executables.
        .executableTarget(
            name: "tidings",
            dependencies: [
                "TidingsCore", "TidingsNet", "TidingsKecalek", "TidingsSandboxKit", "TidingsSandbox", "TidingsYpChat",
                "TidingsMastodon", "TidingsOpenMates", "TidingsPush",
            ],
            linkerSettings: [.unsafeFlags(staticReleaseLinkFlags, .when(platforms: [.linux], configuration: .release))]
        ),
        .executableTarget(
            name: "tidings-bench",
            dependencies: [
                "TidingsCore", "TidingsNet", "TidingsKecalek", "TidingsMastodon", "TidingsSandbox", "CSQLite",
                "TidingsYpChat", "TidingsOpenMates", "TidingsPush", "PeerSupport",
            ],
            path: "Benchmarks/tidings-bench"
        ),
        // A child process for the store's crash test: writes outbox rows until it is killed.
        .executableTarget(
            name: "StoreCrashWriter",
            dependencies: ["TidingsCore", "PeerSupport"],
            path: "Tests/StoreCrashWriter"
        ),

        // The push tests' second process: a notification extension deciding and acting on the app's store file.
        .executableTarget(
            name: "PushExtensionChild",
            dependencies: ["TidingsCore", "TidingsNet", "TidingsMastodon", "TidingsPush"],
            path: "Tests/PushExtensionChild"
        ),

        // Test support: child processes spawned and reaped off Swift's cooperative pool, the real Python
        // peers on loopback (also used by tidings-bench), and the helpers several test targets share.
        .target(name: "PeerSupport", dependencies: ["TidingsCore"], path: "Tests/PeerSupport"),

        // Stand-ins for CryptoKit's, os's and GRDB's common names, in a module of their own (see NameCollisionTests).
        .target(name: "NameCollisionStandIns", dependencies: [], path: "Tests/NameCollisionStandIns"),

        // Tests.
        .testTarget(
            name: "NameCollisionTests",
            dependencies: [
                "NameCollisionStandIns", "TidingsCore", "TidingsNet", "TidingsKecalek", "TidingsMastodon",
                "TidingsYpChat", "TidingsOpenMates", "TidingsPush",
                "TidingsSandboxKit", "TidingsSandbox",
            ]
        ),
        .testTarget(
            name: "TidingsCoreTests", dependencies: ["TidingsCore", "CSQLite", "PeerSupport"],
            swiftSettings: platformChoice),
        .testTarget(
            name: "TidingsNetTests", dependencies: ["TidingsNet", "TidingsCore", "PeerSupport"],
            swiftSettings: platformChoice),
        .testTarget(name: "InteropTests", dependencies: ["TidingsNet", "TidingsCore", "PeerSupport"]),
        .testTarget(
            name: "TidingsKecalekTests",
            dependencies: ["TidingsKecalek", "TidingsSandbox", "TidingsCore", "TidingsNet", "PeerSupport"]
        ),
        .testTarget(
            name: "TidingsMastodonTests",
            dependencies: [
                "TidingsMastodon", "TidingsSandbox", "TidingsSandboxKit", "TidingsCore", "TidingsNet", "PeerSupport",
            ],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "TidingsYpChatTests",
            dependencies: ["TidingsYpChat", "TidingsSandbox", "TidingsCore", "TidingsNet", "PeerSupport"]
        ),
        .testTarget(
            name: "TidingsOpenMatesTests",
            dependencies: ["TidingsOpenMates", "TidingsSandbox", "TidingsCore", "TidingsNet", "PeerSupport"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "TidingsPushTests",
            dependencies: [
                "TidingsPush", "TidingsMastodon", "TidingsSandbox", "TidingsCore", "TidingsNet", "PeerSupport",
            ],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "TidingsSandboxKitTests",
            dependencies: ["TidingsSandboxKit", "TidingsNet", "TidingsCore", "PeerSupport"]
        ),
        .testTarget(
            name: "CLITests",
            dependencies: [
                "tidings", "TidingsCore", "TidingsNet", "TidingsKecalek", "TidingsMastodon", "TidingsSandbox",
                "TidingsYpChat", "TidingsOpenMates", "TidingsPush",
                "PeerSupport",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
