/// The namespace of Tidings' cryptography: keys, digests, HKDF, HMAC, AES-GCM, P-256, RSA and PEM.
///
/// The types live here rather than at the top level so that an app importing CryptoKit (whose
/// `SymmetricKey`, `SHA256`, `P256`, `HKDF` and `Insecure` have the same names) can use both
/// without qualifying either. On Apple platforms they are backed by CryptoKit and Security; elsewhere
/// by OpenSSL.
public enum TidingsCrypto {}
