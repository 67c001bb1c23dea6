import Foundation

/// Test fixtures under Tests/Fixtures/.
enum Fixtures {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    static var serverIdentity: TLSServerIdentityFixture {
        get throws {
            TLSServerIdentityFixture(
                certificateChain: try text("tls/server.pem"), privateKey: try text("tls/server.key"),
                authority: try text("tls/ca.pem"))
        }
    }
}

struct TLSServerIdentityFixture {
    var certificateChain: String
    var privateKey: String
    var authority: String
}
