/// How a TLS client connection verifies its peer.
///
/// Verification is always on: the chain must lead to a trusted root (the system trust store plus
/// ``additionalTrustedCertificates``) and the certificate must name the host connected to (DNS name
/// or IP address in its subject alternative names). There is deliberately no switch to turn it off;
/// tests trust their own CA instead. For example:
///
/// ```swift
/// var tls = TLSConfiguration()
/// tls.additionalTrustedCertificates = [try String(contentsOf: caURL, encoding: .utf8)]
/// ```
public struct TLSConfiguration: Sendable, Equatable {
    /// Extra trusted root certificates, each a PEM text that may hold several certificates.
    public var additionalTrustedCertificates: [String]
    /// Whether the platform's trust store is trusted too (true by default).
    public var trustsSystemStore: Bool
    /// The name to verify and send as SNI instead of the host connected to (for connecting by address
    /// to a named server).
    public var serverNameOverride: String?
    /// ALPN protocol names offered to the server, most preferred first (none by default).
    public var applicationProtocols: [String]

    /// The default configuration: system trust store, host-name verification, TLS 1.2 or later.
    public init(
        additionalTrustedCertificates: [String] = [],
        trustsSystemStore: Bool = true,
        serverNameOverride: String? = nil,
        applicationProtocols: [String] = []
    ) {
        self.additionalTrustedCertificates = additionalTrustedCertificates
        self.trustsSystemStore = trustsSystemStore
        self.serverNameOverride = serverNameOverride
        self.applicationProtocols = applicationProtocols
    }
}

/// The identity a TLS server presents: a certificate chain and its private key, both PEM.
///
/// Used by loopback servers (tests, the sandbox) through ``TLSConnection/accept(over:identity:)``.
public struct TLSServerIdentity: Sendable, Equatable {
    /// The server certificate first, then any intermediates, as PEM text.
    public var certificateChain: String
    /// The private key of the first certificate, as unencrypted PEM text.
    ///
    /// - Warning: a secret; never log it.
    public var privateKey: String

    /// Creates an identity from PEM texts.
    public init(certificateChain: String, privateKey: String) {
        self.certificateChain = certificateChain
        self.privateKey = privateKey
    }
}
