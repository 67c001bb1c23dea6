import Foundation

/// Routes requests to handlers by method and path pattern (`/api/v1/statuses/:id`).
///
/// Guarantees: routes are tried in the order added; a path that matches no route gets 404, a path that
/// matches only under other methods gets 405 with `Allow`; `:name` segments match one non-empty segment
/// and land in ``SandboxHTTPRequest/pathParameters``; `*` as the last segment matches the rest.
public struct SandboxHTTPRouter: Sendable {
    /// Answers one routed request.
    public typealias Handler = @Sendable (SandboxHTTPRequest) async -> SandboxHTTPResponse

    private struct Route: Sendable {
        var method: String
        var segments: [Substring]
        var handler: Handler
    }

    private var routes: [Route] = []

    /// A router with no routes (everything is 404).
    public init() {}

    /// Adds a route for `method` (upper-case or not) and `pattern`.
    public mutating func add(_ method: String, _ pattern: String, _ handler: @escaping Handler) {
        routes.append(
            Route(method: method.uppercased(), segments: pattern.split(separator: "/"), handler: handler))
    }

    /// Answers `request` with the first matching route's handler.
    public func route(_ request: SandboxHTTPRequest) async -> SandboxHTTPResponse {
        let path = request.path.split(separator: "/")
        var allowed: [String] = []
        for route in routes {
            guard let parameters = Self.match(route.segments, path) else { continue }
            guard route.method == request.method else {
                allowed.append(route.method)
                continue
            }
            var routed = request
            routed.pathParameters = parameters
            return await route.handler(routed)
        }
        guard allowed.isEmpty else {
            var response = SandboxHTTPResponse.text("method not allowed", status: 405)
            response.headers.add(name: "Allow", value: allowed.joined(separator: ", "))
            return response
        }
        return .text("not found", status: 404)
    }

    private static func match(_ pattern: [Substring], _ path: [Substring]) -> [String: String]? {
        var parameters: [String: String] = [:]
        for (index, segment) in pattern.enumerated() {
            if segment == "*", index == pattern.count - 1 { return parameters }
            guard index < path.count else { return nil }
            if segment.hasPrefix(":") {
                parameters[String(segment.dropFirst())] = String(path[index])
            } else if segment != path[index] {
                return nil
            }
        }
        return pattern.count == path.count ? parameters : nil
    }
}
