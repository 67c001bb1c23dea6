#if TIDINGS_OPENSSL
    import COpenSSL
#else
    import Security
#endif

extension TidingsCrypto {
    /// `TidingsCrypto.SecureRandom` produces bytes fit for keys and nonces, from the platform's cryptographic source.
    public enum SecureRandom {
        /// Returns `count` cryptographically secure random bytes (an empty array for `count <= 0`).
        public static func bytes(_ count: Int) -> [UInt8] {
            guard count > 0 else { return [] }
            var output = [UInt8](repeating: 0, count: count)
            #if TIDINGS_OPENSSL
                let filled =
                    count <= Int(Int32.max)
                    && output.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) } == 1
            #else
                let status = output.withUnsafeMutableBytes { buffer in
                    buffer.baseAddress.map { SecRandomCopyBytes(kSecRandomDefault, count, $0) } ?? errSecParam
                }
                let filled = status == errSecSuccess
            #endif
            if !filled {
                // The library's generator refused; the operating system's one (getrandom/arc4random)
                // is just as strong, so use it rather than fail a call that must not fail.
                var generator = SystemRandomNumberGenerator()
                for index in output.indices { output[index] = generator.next() }
            }
            return output
        }
    }
}
