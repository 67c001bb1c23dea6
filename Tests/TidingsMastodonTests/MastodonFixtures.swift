import Foundation

/// The test fixtures copied into this target (see Fixtures/README.md for where each came from).
enum MastodonFixtures {
    /// The bytes of a fixture file, e.g. `mastodon-openapi.json`.
    static func data(named name: String) throws -> Data {
        guard let url = Bundle.module.url(forResource: "Fixtures/\(name)", withExtension: nil) else {
            throw CocoaError(.fileNoSuchFile)
        }
        return try Data(contentsOf: url)
    }
}
