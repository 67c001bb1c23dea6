/// A `TidingsError` is the one shape every Tidings error takes: a struct whose kinds are a hidden enum
/// behind public static members, with its context in public properties.
///
/// Conforming types get, once and for all from this protocol:
/// - `==` and `hash(into:)` that compare the **kind only**, so `error == .timedOut` holds whatever the
///   operation, host or detail;
/// - a `~=` that matches **any** `Error` against a kind, so `catch TransportError.timedOut` works and a
///   `switch` over an error lists the kinds it cares about and needs a `default`: a kind added later
///   breaks no caller;
/// - ``shortDescription`` (`TransportError.timedOut`), with no context: safe for metrics.
///
/// For example:
///
/// ```swift
/// do { try await connection.read() }
/// catch TransportError.timedOut { /* retry */ }
/// catch let error as TransportError where error == .certificateUntrusted { log(error.shortDescription) }
/// ```
///
/// A conforming type's `description` names its kind and context but never secrets (tokens, keys, query
/// strings, header values) or payloads.
public protocol TidingsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure: equal for two errors of the same kind whatever their context.
    ///
    /// It is opaque (not an enum), so nothing can switch over it exhaustively; compare errors with the
    /// type's static members instead.
    var kind: TidingsErrorKind { get }
}

extension TidingsError {
    /// Whether both errors are of the same kind; context (operation, host, detail…) is ignored.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.kind == rhs.kind }

    /// Hashes the kind only, consistent with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(kind) }

    /// Whether `error` is an error of this type and of the same kind as `pattern`: this is what lets
    /// `catch TransportError.timedOut` and `case StoreError.busy` match any `Error`.
    public static func ~= (pattern: Self, error: any Error) -> Bool {
        guard let error = error as? Self else { return false }
        return error.kind == pattern.kind
    }

    /// The type and kind only, e.g. `StoreError.busy`: no context, so safe for metrics and logs.
    public var shortDescription: String { "\(Self.self).\(kind.name)" }
}

/// The kind of a ``TidingsError``: a name that compares and hashes, and that no caller can switch over.
public struct TidingsErrorKind: Hashable, Sendable, CustomStringConvertible {
    /// The kind's name, as its static member is spelled (`timedOut`).
    public let name: String

    /// The kind named by a case of an error type's hidden `Code` enum; only error types build kinds, in their
    /// `kind` property.
    public init<Code: RawRepresentable<String>>(_ code: Code) { name = code.rawValue }

    /// The kind's name.
    public var description: String { name }
}
