import TidingsCore

/// A `TransportError` describes why a byte stream (TCP or TLS) could not be opened, read or written.
///
/// Errors carry the operation and the host they concern, never payload bytes. It is a `TidingsError` (TidingsCore):
/// catch by kind, for example `catch TransportError.timedOut`, or compare, `error == .certificateUntrusted`.
public struct TransportError: TidingsError {
    /// The kinds of failure; not public, so a new kind breaks no caller's `switch`.
    package enum Code: String, Sendable {
        case hostNotFound, connectionRefused, timedOut, closed, connectionReset, system, concurrentRead
        case tlsHandshakeFailed, certificateUntrusted, hostnameMismatch, tlsFailure, invalidHostName
    }

    /// What went wrong (inside the package; callers compare with the static members).
    package let code: Code
    /// The operation that failed (`connect`, `read`, `write`, `bind`, `accept`, `handshake`).
    public let operation: String
    /// The host or address involved, when there is one.
    public let host: String?
    /// The `errno` of a failing system call, when there is one.
    public let errno: Int32?
    /// A human-readable detail from the system or OpenSSL (never payload or secrets).
    public let detail: String?

    /// Creates an error of the kind `kind` with its context.
    package init(kind: Code, operation: String, host: String? = nil, code: Int32? = nil, detail: String? = nil) {
        self.code = kind
        self.operation = operation
        self.host = host
        self.errno = code
        self.detail = detail
    }

    /// The kind of failure (compare with the static members, e.g. `error == .timedOut`).
    public var kind: TidingsErrorKind { TidingsErrorKind(code) }

    /// The host name did not resolve.
    public static let hostNotFound = TransportError(kind: .hostNotFound, operation: "")
    /// No address of the host accepted the connection.
    public static let connectionRefused = TransportError(kind: .connectionRefused, operation: "")
    /// The operation did not finish within its timeout.
    public static let timedOut = TransportError(kind: .timedOut, operation: "")
    /// The stream was closed locally before or during the operation.
    public static let closed = TransportError(kind: .closed, operation: "")
    /// The peer reset the connection or the socket failed.
    public static let connectionReset = TransportError(kind: .connectionReset, operation: "")
    /// A system call failed; ``errno`` holds its `errno`.
    public static let system = TransportError(kind: .system, operation: "")
    /// Another task is already reading (or waiting to read) from this stream.
    public static let concurrentRead = TransportError(kind: .concurrentRead, operation: "")
    /// The TLS handshake failed for a reason other than certificate verification.
    public static let tlsHandshakeFailed = TransportError(kind: .tlsHandshakeFailed, operation: "")
    /// The peer's certificate chain is not trusted (expired, unknown issuer, self-signed…).
    public static let certificateUntrusted = TransportError(kind: .certificateUntrusted, operation: "")
    /// The peer's certificate is valid but not for the host name we connected to.
    public static let hostnameMismatch = TransportError(kind: .hostnameMismatch, operation: "")
    /// A TLS record could not be processed after the handshake.
    public static let tlsFailure = TransportError(kind: .tlsFailure, operation: "")
    /// The host name to verify is empty or not a usable DNS name or IP literal, so no certificate
    /// could be checked against it.
    public static let invalidHostName = TransportError(kind: .invalidHostName, operation: "")

    /// The kind, operation, host, `errno` and detail; never payload bytes.
    public var description: String {
        var text = "\(shortDescription) during \(operation)"
        if let host { text += " (\(host))" }
        if let errno { text += " errno \(errno)" }
        if let detail { text += ": \(detail)" }
        return text
    }
}
