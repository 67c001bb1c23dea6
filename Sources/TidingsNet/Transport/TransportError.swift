/// A `TransportError` describes why a byte stream (TCP or TLS) could not be opened, read or written.
///
/// Errors carry the operation and the host they concern, never payload bytes. Catch by kind with
/// `~=`, for example `catch let error as TransportError where error.kind == .timedOut`.
public struct TransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure, stable for `switch` and metrics.
    public enum Kind: String, Sendable, Equatable {
        /// The host name did not resolve.
        case hostNotFound
        /// No address of the host accepted the connection.
        case connectionRefused
        /// The operation did not finish within its timeout.
        case timedOut
        /// The stream was closed locally before or during the operation.
        case closed
        /// The peer reset the connection or the socket failed.
        case connectionReset
        /// A system call failed; `code` holds the `errno`.
        case system
        /// Another task is already reading (or waiting to read) from this stream.
        case concurrentRead
        /// The TLS handshake failed for a reason other than certificate verification.
        case tlsHandshakeFailed
        /// The peer's certificate chain is not trusted (expired, unknown issuer, self-signed…).
        case certificateUntrusted
        /// The peer's certificate is valid but not for the host name we connected to.
        case hostnameMismatch
        /// A TLS record could not be processed after the handshake.
        case tlsFailure
        /// The host name to verify is empty or not a usable DNS name or IP literal, so no certificate
        /// could be checked against it.
        case invalidHostName
    }

    /// What went wrong.
    public let kind: Kind
    /// The operation that failed (`connect`, `read`, `write`, `bind`, `accept`, `handshake`).
    public let operation: String
    /// The host or address involved, when there is one.
    public let host: String?
    /// The `errno` of a failing system call, when there is one.
    public let code: Int32?
    /// A human-readable detail from the system or OpenSSL (never payload or secrets).
    public let detail: String?

    /// Creates an error; library code uses the static helpers instead.
    public init(kind: Kind, operation: String, host: String? = nil, code: Int32? = nil, detail: String? = nil) {
        self.kind = kind
        self.operation = operation
        self.host = host
        self.code = code
        self.detail = detail
    }

    public var description: String {
        var text = "TransportError.\(kind.rawValue) during \(operation)"
        if let host { text += " (\(host))" }
        if let code { text += " errno \(code)" }
        if let detail { text += ": \(detail)" }
        return text
    }

    /// Matches an error of the same kind, so callers can `catch TransportError.timedOut`-style patterns.
    public static func ~= (pattern: Kind, error: TransportError) -> Bool { error.kind == pattern }
}
