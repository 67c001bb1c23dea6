import Foundation

/// Fault switches shared by every sandbox server, as data: a list of rules, each matching requests (an
/// HTTP method and path, a WebSocket upgrade's path, or a Socket.IO event) and saying what goes wrong.
///
/// Guarantees: rules are tried in order and the first that matches applies; a rule with `times` applies
/// that many times and is then spent; the same value drives the in-process `handle` and the loopback
/// socket paths, so a test sees one behaviour either way.
///
/// For example:
///
/// ```swift
/// var faults = SandboxFaults()
/// faults.add(.tooManyRequests(retryAfterSeconds: 30), on: .path("/api/v1/timelines", method: "GET"), times: 1)
/// ```
public struct SandboxFaults: Sendable {
    /// What goes wrong.
    public enum Action: Sendable, Equatable, CustomStringConvertible {
        /// Answer with this status and a short text body instead of the handler's response.
        case status(Int)
        /// Answer 429, with `Retry-After: <seconds>` when given.
        case tooManyRequests(retryAfterSeconds: Int?)
        /// Wait this long on the server's clock, then answer normally.
        case delay(Duration)
        /// Send the response's head and half its body, then cut the connection.
        case dropMidResponse
        /// Accept the request and never answer (until the server stops or the client gives up).
        case neverAnswer
        /// WebSocket: accept the upgrade, then close with this code. HTTP: close without answering.
        case close(code: UInt16)
        /// Answer with the handler's status and headers but a body that is not valid JSON.
        case malformedBody

        /// A short name for logs (`status 503`, `429 retry-after 30`).
        public var description: String {
            switch self {
            case .status(let code): "status \(code)"
            case .tooManyRequests(let seconds): seconds.map { "429 retry-after \($0)" } ?? "429"
            case .delay(let duration): "delay \(duration)"
            case .dropMidResponse: "drop mid-response"
            case .neverAnswer: "never answer"
            case .close(let code): "close \(code)"
            case .malformedBody: "malformed body"
            }
        }
    }

    /// Which requests a rule applies to.
    public struct Match: Sendable, Equatable {
        /// The HTTP method (upper-case), or nil for any.
        public var method: String?
        /// A path prefix (`/api/v1/`); "" matches every path.
        public var pathPrefix: String
        /// A Socket.IO event name, or nil when the rule is about requests.
        public var event: String?

        /// Requests whose path starts with `prefix` and, when given, whose method is `method`.
        public static func path(_ prefix: String, method: String? = nil) -> Match {
            Match(method: method?.uppercased(), pathPrefix: prefix, event: nil)
        }

        /// Every request.
        public static let any = Match(method: nil, pathPrefix: "", event: nil)

        /// A Socket.IO event by name.
        public static func event(_ name: String) -> Match { Match(method: nil, pathPrefix: "", event: name) }

        func matches(method: String, path: String) -> Bool {
            event == nil && (self.method == nil || self.method == method.uppercased()) && path.hasPrefix(pathPrefix)
        }

        func matches(event name: String) -> Bool { event == name }
    }

    /// One switch: where, what, and how many times (nil: until removed).
    public struct Rule: Sendable, Equatable {
        /// Which requests it applies to.
        public var match: Match
        /// What happens to them.
        public var action: Action
        /// How many more times it applies; nil for every time.
        public var times: Int?

        /// A rule applying `action` to `match`, `times` times (nil: always).
        public init(match: Match, action: Action, times: Int? = nil) {
            self.match = match
            self.action = action
            self.times = times
        }
    }

    /// The rules, tried in order.
    public var rules: [Rule]

    /// Switches from `rules` (none: everything behaves).
    public init(rules: [Rule] = []) { self.rules = rules }

    /// Appends a rule.
    public mutating func add(_ action: Action, on match: Match = .any, times: Int? = nil) {
        rules.append(Rule(match: match, action: action, times: times))
    }

    /// The action for a request, spending one use of the rule that matched.
    public mutating func take(method: String, path: String) -> Action? {
        take { $0.matches(method: method, path: path) }
    }

    /// The action for a Socket.IO event, spending one use of the rule that matched.
    public mutating func take(event: String) -> Action? { take { $0.matches(event: event) } }

    private mutating func take(where matches: (Match) -> Bool) -> Action? {
        guard let index = rules.firstIndex(where: { matches($0.match) && ($0.times ?? 1) > 0 }) else { return nil }
        let action = rules[index].action
        if let times = rules[index].times {
            if times <= 1 { rules.remove(at: index) } else { rules[index].times = times - 1 }
        }
        return action
    }
}
