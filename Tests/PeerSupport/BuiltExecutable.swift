import Foundation

/// Finds an executable product built with the tests: the test bundle sits in the build folder next to them.
///
/// - Returns: The first executable called `name` in the bundle's folder or up to three folders above it; the
///   bundle's own folder when there is none (so the caller's "is executable" check fails with the path).
public func builtExecutable(named name: String) -> URL {
    var url = Bundle.main.bundleURL
    for _ in 0..<4 {
        let candidate = url.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        url.deleteLastPathComponent()
    }
    return Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(name)
}
