import Foundation
import TidingsCore

#if TIDINGS_OPENSSL
    import COpenSSL

    /// A `TLSConnection` is a ``ByteStream`` that encrypts another byte stream (usually a
    /// ``TCPConnection``) with OpenSSL 3, as a TLS 1.2+ client.
    ///
    /// OpenSSL only ever sees memory buffers: the encrypted bytes travel through the underlying
    /// stream's async `read`/`write`, so no thread blocks. The peer's chain and host name are verified
    /// during ``connect(over:host:configuration:)``, before any application byte is exchanged.
    /// Reading and writing may happen concurrently from two tasks.
    public final class TLSConnection: ByteStream, Sendable {
        private let transport: any ByteStream
        private let host: String
        // The SSL object is not thread-safe: every call into it happens under this lock, and the lock
        // is never held across a suspension.
        private let session: LockedState<Session>
        private let flushLock = AsyncLock()
        private let readerActive = LockedState(false)
        /// The largest chunk one `read()` returns.
        static let readChunkSize = 64 * 1024

        // @unchecked: OpenSSL's `SSL` object is not thread-safe, and a `Session` lives only inside
        // `session`'s `LockedState` (and `deinit`), so each call into it is made under that lock.
        private struct Session: @unchecked Sendable {
            var ssl: OpaquePointer
            var context: OpaquePointer
            var input: OpaquePointer
            var output: OpaquePointer
            /// Encrypted bytes produced by OpenSSL, in order, not yet handed to the transport.
            var outbound: [UInt8] = []
            /// Whether the peer ended the stream with a `close_notify` alert.
            var receivedCloseNotify = false
            /// Whether the last `SSL_read` asked for more ciphertext and none was fed since: another
            /// call could only say so again, so `read()` goes straight to the transport.
            var awaitingInput = false
            /// Whether our `close_notify` was produced (it is sent once).
            var sentCloseNotify = false
        }

        private init(transport: any ByteStream, host: String, session: Session) {
            self.transport = transport
            self.host = host
            self.session = LockedState(session)
        }

        deinit {
            session.withLock { session in
                SSL_free(session.ssl)  // also frees both memory BIOs
                SSL_CTX_free(session.context)
            }
        }

        /// Runs the TLS handshake over `transport` and verifies the server.
        ///
        /// - Parameters:
        ///   - transport: an open stream to the server; the TLS connection owns it from now on.
        ///   - host: the name (or IP literal) the certificate must match and the SNI to send.
        ///   - configuration: trust settings.
        /// - Returns: a connection ready for application data.
        /// - Throws: ``TransportError`` `certificateUntrusted`, `hostnameMismatch`,
        ///   `tlsHandshakeFailed`, any transport error, `CancellationError`. The transport is closed
        ///   on failure.
        public static func connect(
            over transport: any ByteStream,
            host: String,
            configuration: TLSConfiguration = TLSConfiguration()
        ) async throws -> TLSConnection {
            let name = configuration.serverNameOverride ?? host
            return try await establish(over: transport, host: name) {
                // OpenSSL treats an empty name as "no name to check": any trusted certificate would pass.
                guard isUsableHostName(name) else {
                    throw TransportError(
                        kind: .invalidHostName, operation: "tls-setup",
                        detail: "the host name to verify is empty or malformed")
                }
                return try makeSession(name: name, configuration: configuration)
            }
        }

        /// Runs the server side of the TLS handshake over an accepted `transport`.
        ///
        /// The client is not asked for a certificate.
        ///
        /// - Throws: ``TransportError`` `tlsHandshakeFailed` (bad identity, client gave up), any
        ///   transport error, `CancellationError`. The transport is closed on failure.
        public static func accept(over transport: any ByteStream, identity: TLSServerIdentity) async throws
            -> TLSConnection
        {
            try await establish(over: transport, host: "client") { try makeServerSession(identity: identity) }
        }

        /// Makes a session and runs its handshake over `transport`, closing the transport if either fails
        /// (the connection owns it from the start).
        private static func establish(
            over transport: any ByteStream, host: String, makeSession: () throws -> Session
        ) async throws -> TLSConnection {
            do {
                let connection = TLSConnection(transport: transport, host: host, session: try makeSession())
                try await connection.handshake()
                return connection
            } catch {
                transport.close()
                throw error
            }
        }

        private static func makeServerSession(identity: TLSServerIdentity) throws -> Session {
            func failure(_ detail: String) -> TransportError {
                TransportError(
                    kind: .tlsHandshakeFailed, operation: "tls-setup", detail: "\(detail): \(openSSLErrors())")
            }
            ERR_clear_error()
            guard let context = SSL_CTX_new(TLS_server_method()) else { throw failure("SSL_CTX_new") }
            _ = copenssl_ctx_set_min_proto_version(context, TLS1_2_VERSION)
            copenssl_ctx_disable_renegotiation(context)
            let loaded = withMemoryBIO(identity.certificateChain) { bio -> Bool in
                guard let leaf = PEM_read_bio_X509(bio, nil, nil, nil) else { return false }
                defer { X509_free(leaf) }
                guard SSL_CTX_use_certificate(context, leaf) == 1 else { return false }
                while let intermediate = PEM_read_bio_X509(bio, nil, nil, nil) {
                    // add1 takes its own reference, so ours is freed right after.
                    _ = copenssl_ctx_add1_chain_cert(context, intermediate)
                    X509_free(intermediate)
                }
                ERR_clear_error()
                return true
            }
            let keyLoaded = withMemoryBIO(identity.privateKey) { bio -> Bool in
                guard let key = PEM_read_bio_PrivateKey(bio, nil, nil, nil) else { return false }
                defer { EVP_PKEY_free(key) }
                return SSL_CTX_use_PrivateKey(context, key) == 1 && SSL_CTX_check_private_key(context) == 1
            }
            guard loaded == true, keyLoaded == true else {
                SSL_CTX_free(context)
                throw failure("the server certificate or key could not be loaded")
            }
            guard let ssl = SSL_new(context) else {
                SSL_CTX_free(context)
                throw failure("SSL_new")
            }
            return try attachMemoryBIOs(ssl: ssl, context: context, role: .server, failure: failure)
        }

        private static func withMemoryBIO<T>(_ text: String, _ body: (OpaquePointer) -> T?) -> T? {
            let bytes = Array(text.utf8)
            return bytes.withUnsafeBytes { raw -> T? in
                guard let length = Int32(exactly: raw.count), let bio = BIO_new_mem_buf(raw.baseAddress, length)
                else { return nil }
                defer { BIO_free(bio) }
                return body(bio)
            }
        }

        private static func makeSession(name: String, configuration: TLSConfiguration) throws -> Session {
            func failure(_ detail: String) -> TransportError {
                TransportError(
                    kind: .tlsHandshakeFailed, operation: "tls-setup", host: name,
                    detail: "\(detail): \(openSSLErrors())")
            }
            let context = try clientContext(for: configuration, failure: failure)
            guard let ssl = SSL_new(context) else {
                SSL_CTX_free(context)
                throw failure("SSL_new")
            }
            // Each call below returns 1 on success (ALPN: 0); a failed one would leave the name
            // unchecked, so it fails the connection instead.
            let named: Bool
            if isIPAddress(name) {
                named = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name) == 1
            } else {
                SSL_set_hostflags(ssl, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
                named = SSL_set1_host(ssl, name) == 1 && copenssl_set_tlsext_host_name(ssl, name) == 1
            }
            guard named else {
                let error = failure("the host name could not be set for verification")
                SSL_free(ssl)
                SSL_CTX_free(context)
                throw error
            }
            if !configuration.applicationProtocols.isEmpty {
                var wire: [UInt8] = []
                for name in configuration.applicationProtocols where !name.isEmpty && name.utf8.count < 256 {
                    wire.append(UInt8(name.utf8.count))
                    wire += name.utf8
                }
                guard SSL_set_alpn_protos(ssl, wire, UInt32(wire.count)) == 0 else {
                    let error = failure("SSL_set_alpn_protos")
                    SSL_free(ssl)
                    SSL_CTX_free(context)
                    throw error
                }
            }
            return try attachMemoryBIOs(ssl: ssl, context: context, role: .client, failure: failure)
        }

        private enum Role { case client, server }

        /// Gives `ssl` a pair of memory BIOs (bytes in from the socket, bytes out to it) and sets its role.
        /// On failure `ssl` and this caller's reference to `context` are released.
        private static func attachMemoryBIOs(
            ssl: OpaquePointer, context: OpaquePointer, role: Role, failure: (String) -> TransportError
        ) throws -> Session {
            let input = BIO_new(BIO_s_mem())
            let output = BIO_new(BIO_s_mem())
            guard let input, let output else {
                if let input { BIO_free(input) }
                if let output { BIO_free(output) }
                SSL_free(ssl)
                SSL_CTX_free(context)
                throw failure("BIO_new")
            }
            // An empty input buffer means "wait for more", not end of file.
            _ = copenssl_bio_set_mem_eof_return(input, -1)
            SSL_set_bio(ssl, input, output)
            switch role {
            case .client: SSL_set_connect_state(ssl)
            case .server: SSL_set_accept_state(ssl)
            }
            return Session(ssl: ssl, context: context, input: input, output: output)
        }

        /// Client contexts by trust configuration. Building one loads the system trust store, which
        /// costs milliseconds, so each configuration is built once and shared (an `SSL_CTX` is safe to
        /// share between threads once configured).
        private static let clientContexts = LockedState<[TLSConfiguration: SharedContext]>([:])

        // @unchecked: an `SSL_CTX` is safe to share between threads once configured (OpenSSL locks its
        // reference count and caches), and only configured contexts are cached.
        private struct SharedContext: @unchecked Sendable {
            let pointer: OpaquePointer
        }

        /// A client context for `configuration` with one reference owned by the caller.
        private static func clientContext(
            for configuration: TLSConfiguration, failure: (String) -> TransportError
        ) throws -> OpaquePointer {
            var key = configuration
            key.serverNameOverride = nil
            key.applicationProtocols = []
            return try clientContexts.withLock { cache in
                if let context = cache[key]?.pointer {
                    SSL_CTX_up_ref(context)
                    return context
                }
                ERR_clear_error()
                guard let context = SSL_CTX_new(TLS_client_method()) else { throw failure("SSL_CTX_new") }
                _ = copenssl_ctx_set_min_proto_version(context, TLS1_2_VERSION)
                // Renegotiation has a history of attacks and nothing here needs it.
                copenssl_ctx_disable_renegotiation(context)
                SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
                if configuration.trustsSystemStore { _ = SSL_CTX_set_default_verify_paths(context) }
                if let store = SSL_CTX_get_cert_store(context) {
                    for pem in configuration.additionalTrustedCertificates
                    where addCertificates(pem: pem, to: store) == 0 {
                        SSL_CTX_free(context)
                        throw failure("no certificate in an additionalTrustedCertificates entry")
                    }
                }
                // A handful of configurations per process is normal; beyond that, stop caching.
                if cache.count < 16 {
                    SSL_CTX_up_ref(context)
                    cache[key] = SharedContext(pointer: context)
                }
                return context
            }
        }

        private static func addCertificates(pem: String, to store: OpaquePointer) -> Int {
            let bytes = Array(pem.utf8)
            return bytes.withUnsafeBytes { raw -> Int in
                guard let length = Int32(exactly: raw.count), let bio = BIO_new_mem_buf(raw.baseAddress, length)
                else { return 0 }
                defer { BIO_free(bio) }
                var count = 0
                while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
                    if X509_STORE_add_cert(store, certificate) == 1 { count += 1 }
                    X509_free(certificate)
                }
                ERR_clear_error()  // the loop ends with a harmless "no start line" error
                return count
            }
        }

        private func handshake() async throws {
            while true {
                let (result, error, verify, queue) = session.withLock { session -> (Int32, Int32, Int, String) in
                    ERR_clear_error()
                    let result = SSL_do_handshake(session.ssl)
                    let error = SSL_get_error(session.ssl, result)
                    // OpenSSL's error queue is per thread: read it here, before a suspension moves us.
                    let queue = result == 1 ? "" : openSSLErrors()
                    Self.drainOutput(&session)
                    return (result, error, SSL_get_verify_result(session.ssl), queue)
                }
                try await flush()
                if result == 1 { return }
                switch error {
                case SSL_ERROR_WANT_READ:
                    let bytes = try await transport.read()
                    guard !bytes.isEmpty else {
                        throw TransportError(
                            kind: .tlsHandshakeFailed, operation: "handshake", host: host,
                            detail: "the server closed the connection during the handshake")
                    }
                    feed(bytes)
                case SSL_ERROR_WANT_WRITE:
                    continue
                default:
                    if verify != X509_V_OK {
                        let reason = String(cString: X509_verify_cert_error_string(verify))
                        let mismatch =
                            verify == X509_V_ERR_HOSTNAME_MISMATCH || verify == X509_V_ERR_IP_ADDRESS_MISMATCH
                        throw TransportError(
                            kind: mismatch ? .hostnameMismatch : .certificateUntrusted, operation: "handshake",
                            host: host, code: Int32(truncatingIfNeeded: verify), detail: reason)
                    }
                    throw TransportError(
                        kind: .tlsHandshakeFailed, operation: "handshake", host: host, detail: queue)
                }
            }
        }

        private func feed(_ bytes: [UInt8]) {
            session.withLock { session in
                session.awaitingInput = false
                // Memory BIOs take everything; a failed write can only mean memory ran out.
                _ = Self.writeInSlices(bytes) { BIO_write(session.input, $0, $1) }
            }
        }

        private static func drainOutput(_ session: inout Session) {
            let pending = min(Int(BIO_ctrl_pending(session.output)), Int(Int32.max))
            guard pending > 0 else { return }
            let chunk = [UInt8](unsafeUninitializedCapacity: pending) { raw, initialized in
                initialized = max(Int(BIO_read(session.output, raw.baseAddress, Int32(raw.count))), 0)
            }
            // Usually nothing is waiting: hand the chunk over instead of copying it.
            if session.outbound.isEmpty { session.outbound = chunk } else { session.outbound += chunk }
        }

        /// Hands produced ciphertext to the transport; serialised so chunks keep OpenSSL's order.
        private func flush() async throws {
            try await flushLock.withLock {
                let bytes = session.withLock { session -> [UInt8] in
                    defer { session.outbound = [] }
                    return session.outbound
                }
                if !bytes.isEmpty { try await transport.write(bytes) }
            }
        }

        /// Reads decrypted bytes; an empty array means the peer closed (with or without close_notify).
        ///
        /// - Throws: ``TransportError`` (`tlsFailure`, `concurrentRead`, transport errors),
        ///   `CancellationError`.
        public func read() async throws -> [UInt8] {
            let alreadyReading = readerActive.withLock { active -> Bool in
                defer { active = true }
                return active
            }
            guard !alreadyReading else { throw TransportError(kind: .concurrentRead, operation: "read", host: host) }
            defer { readerActive.withLock { $0 = false } }
            while true {
                let (bytes, error, hasOutput, queue) = session.withLock {
                    session -> ([UInt8], Int32, Bool, String) in
                    if session.awaitingInput { return ([], SSL_ERROR_WANT_READ, false, "") }
                    ERR_clear_error()
                    var error = SSL_ERROR_NONE
                    // Decrypt every buffered record up to the chunk size in one call: a 1 MiB message
                    // then takes a few reads instead of one per 16 KiB record. Not zero-filled:
                    // SSL_read overwrites what it returns, and the rest is cut off.
                    let buffer = [UInt8](unsafeUninitializedCapacity: Self.plaintextCapacity(session)) {
                        raw, initialized in
                        var total = 0
                        while let base = raw.baseAddress, total < raw.count {
                            let count = SSL_read(session.ssl, base + total, Int32(raw.count - total))
                            guard count > 0 else {
                                error = SSL_get_error(session.ssl, count)
                                break
                            }
                            total += Int(count)
                        }
                        initialized = total
                    }
                    if error == SSL_ERROR_ZERO_RETURN { session.receivedCloseNotify = true }
                    session.awaitingInput = error == SSL_ERROR_WANT_READ
                    let failed =
                        buffer.isEmpty && error != SSL_ERROR_ZERO_RETURN && error != SSL_ERROR_WANT_READ
                        && error != SSL_ERROR_WANT_WRITE && error != SSL_ERROR_NONE
                    // The error queue belongs to this thread: read it before any suspension.
                    let queue = failed ? openSSLErrors() : ""
                    Self.drainOutput(&session)
                    return (buffer, error, !session.outbound.isEmpty, queue)
                }
                // Reading rarely produces output (key updates, alerts): skip the flush lock otherwise.
                if hasOutput { try await flush() }
                if !bytes.isEmpty { return bytes }
                switch error {
                case SSL_ERROR_ZERO_RETURN:
                    return []
                case SSL_ERROR_WANT_READ:
                    let encrypted = try await transport.read()
                    if encrypted.isEmpty { return [] }
                    feed(encrypted)
                case SSL_ERROR_WANT_WRITE, SSL_ERROR_NONE:
                    continue
                default:
                    throw TransportError(kind: .tlsFailure, operation: "read", host: host, detail: queue)
                }
            }
        }

        /// Room for the plaintext one pass of `SSL_read` calls can produce: never more than the ciphertext
        /// waiting in the input BIO plus what OpenSSL already holds (decrypted bytes not yet returned and
        /// at most one partial record, together under `heldByOpenSSL`), and at least one byte so the
        /// pass still learns OpenSSL's state. Sizing by it instead of always `readChunkSize` keeps a read
        /// of a few small records from allocating, and freeing, 64 KiB each time (glibc consolidates its
        /// free lists on every free that large). Too small a buffer only leaves the rest for the next pass.
        private static func plaintextCapacity(_ session: Session) -> Int {
            let ciphertext = Int(BIO_ctrl_pending(session.input))
            let held = SSL_has_pending(session.ssl) == 1 ? heldByOpenSSL : 0
            return min(readChunkSize, max(ciphertext + held, 1))
        }

        /// A bound on the plaintext OpenSSL can hold between two reads: one record's plaintext (16 KiB)
        /// plus one partly received record (16 KiB and its overhead).
        static let heldByOpenSSL = 34 * 1024

        /// Encrypts and writes all of `bytes`.
        ///
        /// - Throws: ``TransportError`` (`tlsFailure`, transport errors), `CancellationError`.
        public func write(_ bytes: [UInt8]) async throws {
            guard !bytes.isEmpty else { return }
            let failure = session.withLock { session -> String? in
                ERR_clear_error()
                // Memory BIOs accept everything, so SSL_write takes a whole slice; slices keep the
                // count within Int32 for any buffer size.
                guard Self.writeInSlices(bytes, write: { SSL_write(session.ssl, $0, $1) }) else {
                    let queue = openSSLErrors()
                    Self.drainOutput(&session)
                    return queue
                }
                Self.drainOutput(&session)
                return nil
            }
            if let failure {
                throw TransportError(kind: .tlsFailure, operation: "write", host: host, detail: failure)
            }
            try await flush()
        }

        /// The largest slice handed to one `SSL_write` or `BIO_write` (their lengths are `Int32`).
        static let maximumWriteSlice = 1 << 30

        /// Hands all of `bytes` to `write` in slices of at most `sliceLimit` bytes, each length within
        /// `Int32` whatever the buffer's size, going on from where a partial write stopped; false as soon
        /// as `write` reports a failure (a result of 0 or less).
        static func writeInSlices(
            _ bytes: [UInt8], sliceLimit: Int = maximumWriteSlice,
            write: (UnsafeRawPointer, Int32) -> Int32
        ) -> Bool {
            let limit = max(1, min(sliceLimit, Int(Int32.max)))
            return bytes.withUnsafeBytes { raw in
                var offset = 0
                while let base = raw.baseAddress, offset < raw.count {
                    let written = write(base + offset, Int32(min(raw.count - offset, limit)))
                    guard written > 0 else { return false }
                    offset += Int(written)
                }
                return true
            }
        }

        /// Whether the peer ended the stream with a TLS `close_notify` alert. A `read()` that returned
        /// the end of the stream without it may have been cut short by an attacker: a body framed only
        /// by the end of the connection must then be treated as truncated.
        public var receivedCloseNotify: Bool { session.withLock { $0.receivedCloseNotify } }

        /// Whether this session refuses renegotiation (always, by construction; for tests).
        var refusesRenegotiation: Bool { session.withLock { copenssl_renegotiation_disabled($0.ssl) == 1 } }

        /// How long ``close()`` lets the `close_notify` alert wait for the transport before closing it.
        static let closeNotifyGrace = Duration.milliseconds(500)

        /// Sends a TLS `close_notify` alert (once the handshake is done) and closes the underlying
        /// stream; pending reads and writes fail with ``TransportError/closed``.
        ///
        /// The alert is written without waiting: the transport closes as soon as it is sent, and at
        /// the latest after a short grace period if the peer does not read.
        public func close() {
            let alert = session.withLock { session -> [UInt8] in
                guard !session.sentCloseNotify, SSL_is_init_finished(session.ssl) == 1 else { return [] }
                session.sentCloseNotify = true
                ERR_clear_error()
                _ = SSL_shutdown(session.ssl)
                ERR_clear_error()
                Self.drainOutput(&session)
                defer { session.outbound = [] }
                return session.outbound
            }
            let transport = self.transport
            guard !alert.isEmpty else {
                transport.close()
                return
            }
            let grace = Task {
                try? await Task.sleep(for: Self.closeNotifyGrace)
                transport.close()
            }
            Task {
                try? await transport.write(alert)
                transport.close()
                grace.cancel()
            }
        }
    }

    #if os(Linux)
        extension TLSConnection: ReactorDrivenStream {
            /// The reactor of the underlying stream, if it has one: a WebSocket's TLS reader then reads,
            /// decrypts and decodes on that reactor's thread, and a read wakes one pool thread (the
            /// consumer's) instead of two.
            var reactorExecutor: ReactorExecutor? { (transport as? any ReactorDrivenStream)?.reactorExecutor }
        }
    #endif

    /// The pending OpenSSL errors of this thread, as text, oldest first.
    func openSSLErrors() -> String {
        let reasons = drainOpenSSLErrors()
        return reasons.isEmpty ? "unknown TLS error" : reasons
    }
#endif

/// Whether `name` can be checked against a certificate: an IP literal, or a DNS name of at most 253
/// bytes of printable ASCII without spaces or `*`, made of non-empty labels.
///
/// OpenSSL reads some names as patterns rather than names: an empty one clears the check, and one with a
/// leading dot (`.com`) matches every subdomain, so either would accept any trusted certificate.
func isUsableHostName(_ name: String) -> Bool {
    let bytes = Array(name.utf8)
    guard !bytes.isEmpty, bytes.count <= 253 else { return false }
    if isIPAddress(name) { return true }
    let dot = UInt8(ascii: ".")
    return bytes.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "*") }
        && bytes.split(separator: dot, omittingEmptySubsequences: false).allSatisfy { !$0.isEmpty }
}

/// Whether `host` is an IPv4 or IPv6 literal (certificates name those in IP SANs, not DNS SANs).
func isIPAddress(_ host: String) -> Bool {
    var v4 = in_addr()
    var v6 = in6_addr()
    return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
}
