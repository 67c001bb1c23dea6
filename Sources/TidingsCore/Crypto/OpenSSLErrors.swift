#if TIDINGS_OPENSSL
    import COpenSSL

    /// Drains OpenSSL's thread-local error queue into one line (empty when it was empty), so an error says
    /// what failed and no stale entry confuses the next caller on this thread: crypto here and TidingsNet's
    /// TLS client read the same queue.
    package func drainOpenSSLErrors() -> String {
        var reasons: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            reasons.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return reasons.joined(separator: "; ")
    }

    /// A `.backend` error naming the failed call and OpenSSL's own reasons.
    func openSSLFailure(_ call: String) -> CryptoError {
        let reasons = drainOpenSSLErrors()
        return .backend(reasons.isEmpty ? call : "\(call): \(reasons)")
    }
#endif
